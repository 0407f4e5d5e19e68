"""Pointmap project: head scale branch, losses, loading, targets and metric."""
import math

import cv2
import numpy as np
import pytest
import torch
from mmengine.structures import PixelData

from sapiens2.structures import DenseDataSample
from sapiens2_pointmap import (
    PointmapDirDataset,
    PointmapGenerateTarget,
    PointmapHead,
    PointmapIntrinsicsConsistencyLoss,
    PointmapL1Loss,
    PointmapMetric,
    PointmapNormalLoss,
    PointmapScaleL1Loss,
    PointmapShiftInvariantL1Loss,
    SiLogLoss,
)
from sapiens2_pointmap.datasets.pointmap_generate_target import backproject
from tests.projects.dense_samples import synthhumans_val


def _head(img_size):
    return PointmapHead(in_channels=8, img_size=img_size, upsample_channels=(4, 4, 4, 4), conv_out_channels=(4, ),
                        scale_conv_out_channels=(8, 8, 4), scale_hidden_channels=(8, 4))


@pytest.mark.parametrize('img_size,grid,features', [((1024, 768), (64, 48), 4 * 8 * 6),
                                                    ((256, 192), (16, 12), 4 * 2 * 2),
                                                    ((160, 128), (10, 8), 4 * 2 * 1)])
def test_scale_linear_input_follows_img_size(img_size, grid, features):
    head = _head(img_size)
    assert head.grid_size == grid
    assert head.scale_final_layer[1].in_features == features


def test_forward_shapes_and_clear_error_for_another_grid():
    head = _head((256, 192))
    pointmap, scale = head(torch.randn(2, 8, 16, 12))
    assert pointmap.shape == (2, 3, 256, 192) and scale.shape == (2, 1)
    with pytest.raises(ValueError, match='built for a 16x12 token grid'):
        head(torch.randn(2, 8, 8, 6))


def test_predict_keeps_the_canonical_map_and_adds_the_metric_pointmap():
    head = _head((256, 192))
    samples = [DenseDataSample(metainfo=dict(ori_shape=(100, 60), img_shape=(256, 192), letterbox_pad=(16, 16, 0, 0)))
               for _ in range(2)]
    predictions = head.predict(torch.randn(2, 8, 16, 12), samples)
    for prediction in predictions:
        canonical, scale = prediction['pred_dense'].data, prediction['pred_scale']
        assert canonical.shape == (3, 100, 60) and scale.shape == (1, )
        torch.testing.assert_close(prediction['pred_pointmap'].data, canonical / scale.clamp_min(1e-6))


def _plane(h=4, w=5, depth=2.0, fx=10.0):
    cam_k = torch.tensor([[fx, 0, 2.0], [0, fx, 1.5], [0, 0, 1]])
    points = torch.from_numpy(backproject(np.full((h, w), depth), cam_k.double().numpy())).float()
    return points.permute(2, 0, 1)[None], cam_k[None]


def test_l1_normalises_by_mean_depth_and_clamps():
    gt, _ = _plane()
    mask = torch.ones(1, 1, 4, 5, dtype=torch.bool)
    mean_depth = torch.full((1, 1, 1, 1), 2.0)
    pred = gt.clone()
    pred[:, 2] += 1.0  # Z off by 1 -> 0.5 after normalisation
    assert PointmapL1Loss(loss_weight=2.0)(pred, gt, mask, mean_depth=mean_depth).item() == pytest.approx(1.0)
    assert PointmapL1Loss()(pred + 100, gt, mask, mean_depth=mean_depth).item() == 4.0


def test_shift_invariant_ignores_a_global_shift():
    gt, _ = _plane()
    mask = torch.ones(1, 1, 4, 5, dtype=torch.bool)
    loss = PointmapShiftInvariantL1Loss()(gt + torch.tensor([1.0, -2.0, 3.0]).view(1, 3, 1, 1), gt, mask,
                                          mean_depth=torch.ones(1, 1, 1, 1))
    assert loss.item() == pytest.approx(0.0, abs=1e-6)


def test_silog_of_a_scaled_depth():
    gt, _ = _plane()
    mask = torch.ones(1, 1, 4, 5, dtype=torch.bool)
    loss = SiLogLoss()(gt * 2.0, gt, mask)
    assert loss.item() == pytest.approx(math.sqrt(0.5) * math.log(2.0), rel=1e-5)


def test_intrinsics_consistency_is_zero_on_backprojected_points():
    gt, cam_k = _plane()
    mask = torch.ones(1, 1, 4, 5, dtype=torch.bool)
    loss = PointmapIntrinsicsConsistencyLoss()
    assert loss(gt, gt, mask, cam_K=cam_k).item() == pytest.approx(0.0, abs=1e-6)
    shifted = gt.clone()
    shifted[:, 0] += 0.25
    assert loss(shifted, gt, mask, cam_K=cam_k).item() == pytest.approx(0.25, rel=1e-5)


def test_normal_loss_of_perpendicular_planes():
    h, w = 4, 5
    v, u = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing='ij')
    gt = torch.stack([u * 0.01, v * 0.01, torch.ones(h, w)])[None]  # z = 1 plane, normal (0, 0, 1)
    pred = torch.stack([torch.ones(h, w), v * 0.01, u * 0.01])[None]  # x = 1 plane, normal (-1, 0, 0)
    mask = torch.ones(1, 1, h, w, dtype=torch.bool)
    loss = PointmapNormalLoss()
    assert loss(gt, gt, mask, gt_scale=torch.ones(1, 1)).item() == pytest.approx(0.0, abs=1e-6)
    assert loss(pred, gt, mask, gt_scale=torch.full((1, 1), 3.0)).item() == pytest.approx(5.0 / 3.0, rel=1e-5)


def test_scale_l1():
    loss = PointmapScaleL1Loss(loss_weight=4.0)
    value = loss(None, None, None, pred_scale=torch.tensor([[1.0], [2.0]]), gt_scale=torch.tensor([[1.5], [1.0]]))
    assert value.item() == pytest.approx(4.0 * 0.75)


def test_generate_target_canonicalises_to_focal_768():
    cam_k = np.array([[384.0, 0, 2.0], [0, 384.0, 1.0], [0, 0, 1]])
    mask = np.ones((3, 4), bool)
    mask[0, 0] = False
    results = PointmapGenerateTarget()(dict(gt_depth=np.full((3, 4), 1.5, np.float32), gt_mask=mask, cam_K=cam_k))
    assert results['gt_scale'] == pytest.approx(2.0)
    assert results['gt_mean_depth'] == pytest.approx(3.0)
    np.testing.assert_allclose(results['gt_pointmap'][1, 3], [2.0 * (3 - 2) * 1.5 / 384, 0.0, 3.0], rtol=1e-6)
    assert (results['gt_pointmap'][0, 0] == 0).all()
    np.testing.assert_allclose(results['cam_K'][0], [768.0, 0, 4.0])
    np.testing.assert_allclose(results['original_K'], cam_k)
    assert PointmapGenerateTarget(min_depth=4.0)(dict(gt_depth=np.full((3, 4), 1.5, np.float32), gt_mask=mask,
                                                      cam_K=cam_k)) is None


def test_generate_target_uses_original_intrinsics_for_original_size_gt():
    input_k = np.array([[384.0, 0, 2.0], [0, 384.0, 1.0], [0, 0, 1]])
    gt_k = np.array([[768.0, 0, 4.0], [0, 768.0, 2.0], [0, 0, 1]])
    results = PointmapGenerateTarget()(dict(gt_depth=np.ones((6, 8), np.float32), gt_mask=np.ones((6, 8), bool),
                                            cam_K=input_k, gt_cam_K=gt_k))
    np.testing.assert_allclose(results['gt_pointmap'][2, 5], [2.0 * (5 - 4) / 768, 0.0, 2.0], rtol=1e-6)


def test_loading_reads_cameras_and_rejects_bad_matrices(tmp_path, sapiens2_scope):
    for sub in ('rgb', 'mask', 'depth', 'camera_intrinsics', 'camera_extrinsics'):
        (tmp_path / sub).mkdir()
    cv2.imwrite(str(tmp_path / 'rgb' / 'a.png'), np.zeros((6, 4, 3), np.uint8))
    cv2.imwrite(str(tmp_path / 'mask' / 'a.png'), np.full((6, 4), 255, np.uint8))
    depth = np.full((6, 4), 2.0, np.float32)
    depth[0, 0] = np.nan
    np.save(tmp_path / 'depth' / 'a.npy', depth)
    np.savetxt(tmp_path / 'camera_intrinsics' / 'a.txt', np.eye(3))
    np.savetxt(tmp_path / 'camera_extrinsics' / 'a.txt', np.eye(3))
    dataset = PointmapDirDataset(data_root=str(tmp_path), pipeline=[dict(type='LoadImageFromFile'),
                                                                     dict(type='LoadPointmapAnnotations')])
    with pytest.raises(ValueError, match='4x4 matrix'):
        dataset.prepare_data(0)
    np.savetxt(tmp_path / 'camera_extrinsics' / 'a.txt', np.eye(4))
    results = dataset.prepare_data(0)
    assert results['gt_mask'].sum() == 23 and results['cam_extrinsics'].shape == (4, 4)


def test_synthhumans_pointmap_targets(synthhumans_root, sapiens2_scope):
    dataset = synthhumans_val(PointmapDirDataset, synthhumans_root, 'LoadPointmapAnnotations', 'gt_depth',
                              dict(type='PointmapGenerateTarget'),
                              dict(type='PackDenseInputs', target_key='gt_pointmap',
                                   extra_keys=('gt_scale', 'gt_mean_depth', 'original_K')))
    sample = dataset[0]['data_samples']
    mask = sample.gt_dense.mask[0]
    z = sample.gt_dense.data[2][mask]
    assert z.min() > 0 and sample.gt_mean_depth.item() == pytest.approx(z.mean().item(), rel=1e-4)
    assert sample.gt_scale.item() == pytest.approx(768.0 / sample.original_K[0, 0].item(), rel=1e-5)


def test_metric_known_offset():
    gt, _ = _plane(h=8, w=8)
    sample = DenseDataSample()
    sample.gt_dense = PixelData(data=gt[0], mask=torch.ones(1, 8, 8, dtype=torch.bool))
    sample.pred_dense = PixelData(data=gt[0] + torch.tensor([0.03, 0.0, 0.0]).view(3, 1, 1))
    metric = PointmapMetric()
    metric.process({}, [sample.to_dict()])
    results = metric.compute_metrics(metric.results)
    assert results['l2_mean'] == pytest.approx(0.03, rel=1e-5) and results['x_mae'] == pytest.approx(0.03, rel=1e-5)
    assert results['y_mae'] == pytest.approx(0.0, abs=1e-7) and results['rmse'] == pytest.approx(0.03, rel=1e-5)
    assert results['within_05_cm'] == 100.0
    assert results['normal_mean_angle'] < 0.5


@pytest.mark.parametrize('depth_factor, abs_rel, delta_1', [(1.1, 0.1, 100.0), (0.7, 0.3, 0.0)])
def test_metric_depth_abs_rel_and_delta(depth_factor, abs_rel, delta_1):
    gt, _ = _plane(h=8, w=8)
    sample = DenseDataSample()
    sample.gt_dense = PixelData(data=gt[0], mask=torch.ones(1, 8, 8, dtype=torch.bool))
    sample.pred_dense = PixelData(data=gt[0] * torch.tensor([1.0, 1.0, depth_factor]).view(3, 1, 1))
    metric = PointmapMetric()
    metric.process({}, [sample.to_dict()])
    results = metric.compute_metrics(metric.results)
    assert results['abs_rel'] == pytest.approx(abs_rel, rel=1e-5)
    assert results['abs_rel_scaled'] == pytest.approx(0.0, abs=1e-6)  # a global depth scale is undone
    assert results['delta_1'] == delta_1


def test_visualization_hook_renders_depth():
    from sapiens2_pointmap import PointmapVisualizationHook
    gt, _ = _plane(h=8, w=6)
    picture = PointmapVisualizationHook().render(gt[0].numpy(), np.ones((8, 6), bool))
    assert picture.shape == (8, 6, 3) and picture.dtype == np.uint8 and picture.any()
