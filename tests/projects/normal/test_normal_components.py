"""Normal project: head, loss, loading, dataset, metric and visualisation hook."""
import math

import cv2
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mmengine.structures import PixelData

from sapiens2.structures import DenseDataSample
from sapiens2_normal import (
    LoadNormalAnnotations,
    NormalCosineSimilarityLoss,
    NormalDirDataset,
    NormalHead,
    NormalMetric,
    NormalVisualizationHook,
)
from tests.projects.dense_samples import metric_sample as _sample
from tests.projects.dense_samples import synthhumans_val


def test_cosine_loss_known_values():
    mask = torch.ones(1, 1, 2, 2, dtype=torch.bool)
    x = torch.tensor([1.0, 0.0, 0.0]).view(1, 3, 1, 1).expand(1, 3, 2, 2)
    y = torch.tensor([0.0, 1.0, 0.0]).view(1, 3, 1, 1).expand(1, 3, 2, 2)
    loss = NormalCosineSimilarityLoss(loss_weight=10.0)
    assert loss(x, y, mask).item() == pytest.approx(10.0)
    assert loss(3 * x, x, mask).item() == pytest.approx(0.0, abs=1e-6)
    assert loss(-x, x, mask).item() == pytest.approx(20.0)
    assert loss.loss_name == 'loss_cosine_sim'


def test_head_shapes_and_unit_predictions():
    head = NormalHead(in_channels=16, upsample_channels=(8, 8, 8, 8), conv_out_channels=(8, ))
    out = head(torch.randn(2, 16, 2, 3))
    assert out.shape == (2, 3, 32, 48)
    torch.testing.assert_close(head.postprocess(out)['map'].norm(dim=1), torch.ones(2, 32, 48))


def _write_sample(root, normal, mask):
    for sub in ('rgb', 'mask', 'normal'):
        (root / sub).mkdir(exist_ok=True)
    cv2.imwrite(str(root / 'rgb' / 'a.png'), np.zeros((*mask.shape, 3), np.uint8))
    cv2.imwrite(str(root / 'mask' / 'a.png'), mask.astype(np.uint8) * 255)
    np.savez(root / 'normal' / 'a.npz', normal=normal)
    return dict(img=np.zeros((*mask.shape, 3), np.uint8), img_path=str(root / 'rgb' / 'a.png'),
                mask_path=str(root / 'mask' / 'a.png'), normal_path=str(root / 'normal' / 'a.npz'))


def test_loading_drops_nan_and_renormalises(tmp_path):
    normal = np.zeros((4, 4, 3), np.float32)
    normal[..., 2] = 2.0
    normal[0, 0] = np.nan
    results = LoadNormalAnnotations()(_write_sample(tmp_path, normal, np.ones((4, 4), bool)))
    assert not results['gt_mask'][0, 0] and results['gt_mask'].sum() == 15
    np.testing.assert_allclose(results['gt_normal'][1, 1], [0, 0, 1])


def test_loading_reports_size_mismatch(tmp_path):
    results = _write_sample(tmp_path, np.ones((5, 4, 3), np.float32), np.ones((4, 4), bool))
    with pytest.raises(ValueError, match='same size'):
        LoadNormalAnnotations()(results)


def test_loading_removes_face_and_hair_with_a_seg_map(tmp_path):
    results = _write_sample(tmp_path, np.ones((4, 4, 3), np.float32), np.ones((4, 4), bool))
    seg = np.zeros((4, 4), np.int64)
    seg[0] = 3  # hair
    np.save(tmp_path / 'a_seg.npy', seg)
    out = LoadNormalAnnotations()(dict(results, seg_path=str(tmp_path / 'a_seg.npy')))
    assert out['gt_mask'].sum() == 12
    with pytest.raises(FileNotFoundError, match='missing_seg.npy does not exist'):
        LoadNormalAnnotations()(dict(results, seg_path=str(tmp_path / 'missing_seg.npy')))


def test_dataset_names_the_images_without_a_seg_map(tmp_path):
    _write_sample(tmp_path, np.ones((4, 4, 3), np.float32), np.ones((4, 4), bool))
    (tmp_path / 'seg').mkdir()
    with pytest.raises(FileNotFoundError, match=r"1 of 1 images have no <name>_seg\.npy in seg_data_root .*\['a'\]"):
        NormalDirDataset(data_root=str(tmp_path), seg_data_root=str(tmp_path / 'seg'))


def test_synthhumans_normals_load_and_pack(synthhumans_root, sapiens2_scope):
    dataset = synthhumans_val(NormalDirDataset, synthhumans_root, 'LoadNormalAnnotations', 'gt_normal',
                              dict(type='PackDenseInputs', target_key='gt_normal'))
    packed = dataset[0]
    sample = packed['data_samples']
    assert packed['inputs'].shape == (3, 128, 96)
    mask = sample.gt_dense.mask[0]
    assert mask.any()
    torch.testing.assert_close(sample.gt_dense.data[:, mask].norm(dim=0), torch.ones(int(mask.sum())))


def test_metric_known_angles():
    gt = torch.tensor([0.0, 0.0, 1.0]).view(3, 1, 1).repeat(1, 2, 2)
    angle = math.radians(10.0)
    pred = torch.tensor([math.sin(angle), 0.0, math.cos(angle)]).view(3, 1, 1).repeat(1, 2, 2)
    metric = NormalMetric()
    metric.process({}, [_sample(pred, gt), _sample(gt, gt)])
    results = metric.compute_metrics(metric.results)
    assert results['mean_angle'] == pytest.approx(5.0, abs=1e-3)
    assert results['within_5_0_deg'] == 50.0 and results['within_11_25_deg'] == 100.0


def test_visualization_hook_draws_three_panels(tmp_path):
    cv2.imwrite(str(tmp_path / 'a.png'), np.zeros((8, 6, 3), np.uint8))
    sample = DenseDataSample(metainfo=dict(img_path=str(tmp_path / 'a.png')))
    normals = F.normalize(torch.randn(3, 8, 6), dim=0)
    sample.gt_dense = PixelData(data=normals, mask=torch.ones(1, 8, 6, dtype=torch.bool))
    sample.pred_dense = PixelData(data=normals)
    drawn = []

    class _Visualizer:

        def add_image(self, name, image, step):
            drawn.append((name, image.shape, step))

    class _Runner:
        visualizer = _Visualizer()
        iter = 7

    NormalVisualizationHook(interval=1).after_val_iter(_Runner(), 0, {}, [sample])
    assert drawn == [('val_NormalVisualizationHook_0', (8, 18, 3), 7)]


def test_visualization_hook_draws_every_test_sample_unless_draw_is_off(tmp_path):
    samples = []
    for name in ('a', 'b'):
        cv2.imwrite(str(tmp_path / f'{name}.png'), np.zeros((8, 6, 3), np.uint8))
        sample = DenseDataSample(metainfo=dict(img_path=str(tmp_path / f'{name}.png')))
        sample.pred_dense = PixelData(data=F.normalize(torch.randn(3, 8, 6), dim=0))
        samples.append(sample)
    drawn = []

    class _Visualizer:

        def add_image(self, name, image, step):
            drawn.append((name, image.shape))

    class _Runner:
        visualizer = _Visualizer()
        iter = 0

    NormalVisualizationHook(interval=1).after_test_iter(_Runner(), 0, {}, samples)
    assert drawn == [('test_a', (8, 12, 3)), ('test_b', (8, 12, 3))]  # no ground truth: [image | prediction]
    NormalVisualizationHook(interval=1, draw=False).after_test_iter(_Runner(), 1, {}, samples)
    NormalVisualizationHook(interval=2).after_test_iter(_Runner(), 1, {}, samples)
    assert len(drawn) == 2


def test_head_predict_returns_unit_normals_at_the_original_size():
    head = NormalHead(in_channels=8, upsample_channels=(4, ), conv_out_channels=(4, ))
    sample = DenseDataSample(metainfo=dict(ori_shape=(30, 17), img_shape=(16, 16), letterbox_pad=(3, 3, 0, 0)))
    prediction = head.predict(torch.randn(1, 8, 8, 8), [sample])[0]
    normals = prediction['pred_dense'].data
    assert normals.shape == (3, 30, 17)
    torch.testing.assert_close(normals.norm(dim=0), torch.ones(30, 17))
