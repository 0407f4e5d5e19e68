"""Albedo project: head, chromaticity loss, loading, metric."""
import cv2
import numpy as np
import pytest
import torch

from sapiens2_albedo import AlbedoChromaticityL1Loss, AlbedoDirDataset, AlbedoHead, AlbedoMetric
from tests.projects.dense_samples import metric_sample as _sample


def test_head_uses_rmsnorm_and_clamps_predictions():
    head = AlbedoHead(in_channels=8, upsample_channels=(4, 4, 4, 4), conv_out_channels=(4, ))
    assert 'input_conv.1.norm.weight' in head.state_dict()
    out = head(torch.randn(1, 8, 2, 2))
    assert out.shape == (1, 3, 32, 32)
    clamped = head.postprocess(out * 100)['map']
    assert clamped.min() >= 0 and clamped.max() <= 1


def test_chromaticity_loss_known_values():
    mask = torch.ones(1, 1, 2, 2, dtype=torch.bool)
    red = torch.tensor([0.5, 0.0, 0.0]).view(1, 3, 1, 1).expand(1, 3, 2, 2)
    green = torch.tensor([0.0, 0.5, 0.0]).view(1, 3, 1, 1).expand(1, 3, 2, 2)
    loss = AlbedoChromaticityL1Loss()
    assert loss(red, green, mask).item() == pytest.approx(2.0, rel=1e-5)
    assert loss(red * 2, red, mask).item() == pytest.approx(0.0, abs=1e-5)
    assert loss(red * 4, red, mask).item() == pytest.approx(0.0, abs=1e-5)  # clamped to 1 keeps the chroma


def _write(root, albedo_bgr, mask):
    for sub in ('rgb', 'albedo', 'mask'):
        (root / sub).mkdir(exist_ok=True)
    cv2.imwrite(str(root / 'rgb' / 'a.png'), np.zeros_like(albedo_bgr))
    cv2.imwrite(str(root / 'albedo' / 'a.png'), albedo_bgr)
    cv2.imwrite(str(root / 'mask' / 'a.png'), mask.astype(np.uint8) * 255)
    return AlbedoDirDataset(data_root=str(root), pipeline=[dict(type='LoadImageFromFile'),
                                                            dict(type='LoadAlbedoAnnotations')])


def test_loading_reads_rgb_in_unit_range_and_rejects_flat_albedo(tmp_path, sapiens2_scope):
    albedo = np.zeros((8, 8, 3), np.uint8)
    albedo[..., 0] = np.arange(8, dtype=np.uint8)[None] * 30  # blue ramp in BGR
    dataset = _write(tmp_path, albedo, np.ones((8, 8), bool))
    results = dataset.prepare_data(0)
    assert results['gt_albedo'][0, 7, 2] == pytest.approx(210 / 255)
    assert results['gt_albedo'][..., 0].max() == 0
    flat = _write(tmp_path, np.full((8, 8, 3), 128, np.uint8), np.ones((8, 8), bool))
    assert flat.pipeline(flat.get_data_info(0)) is None


def test_synthhumans_albedo_loads(synthhumans_root, sapiens2_scope):
    dataset = AlbedoDirDataset(data_root=f'{synthhumans_root}/val',
                               pipeline=[dict(type='LoadImageFromFile'), dict(type='LoadAlbedoAnnotations')],
                               test_mode=True)
    results = dataset[0]
    assert results['gt_albedo'].shape == results['img'].shape and results['gt_mask'].any()
    assert 0.0 <= results['gt_albedo'].min() and results['gt_albedo'].max() <= 1.0


def test_metric_known_offset_and_identity():
    gt = torch.rand(3, 16, 16, generator=torch.Generator().manual_seed(0)) * 0.8
    metric = AlbedoMetric()
    metric.process({}, [_sample(gt + 0.1, gt)])
    shifted = metric.compute_metrics(metric.results)
    assert shifted['mae'] == pytest.approx(0.1, rel=1e-5) and shifted['rmse'] == pytest.approx(0.1, rel=1e-5)
    assert shifted['psnr'] == pytest.approx(20.0, rel=1e-4)
    assert shifted['grad_l1'] == pytest.approx(0.0, abs=1e-6)
    identity = AlbedoMetric()
    identity.process({}, [_sample(gt, gt)])
    assert identity.compute_metrics(identity.results)['ssim'] == pytest.approx(1.0, abs=1e-6)
    assert shifted['ssim'] < 1.0


def test_visualization_hook_renders_albedo_on_grey():
    from sapiens2_albedo import AlbedoVisualizationHook
    mask = np.zeros((4, 4), bool)
    mask[:2] = True
    picture = AlbedoVisualizationHook().render(np.ones((3, 4, 4), np.float32), mask)
    assert (picture[:2] == 255).all() and (picture[2:] == 100).all()
