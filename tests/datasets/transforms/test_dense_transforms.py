import random

import numpy as np
import torch

from sapiens2.datasets.transforms import (
    DenseRandomCropContinuous,
    DenseRandomFlip,
    DenseRandomScale,
    FilterDenseSample,
    PackDenseInputs,
    RandomDownUpSample,
    RandomSolarize,
)


def _results(h=20, w=30):
    normal = np.zeros((h, w, 3), np.float32)
    normal[..., 0] = 1.0
    return dict(img=np.random.randint(0, 255, (h, w, 3), dtype=np.uint8), gt_mask=np.ones((h, w), bool),
                gt_normal=normal, gt_depth=np.arange(h * w, dtype=np.float32).reshape(h, w),
                cam_K=np.array([[50.0, 0, 10], [0, 50.0, 8], [0, 0, 1]]), cam_extrinsics=np.eye(4))


def test_flip_mirrors_maps_negates_normal_x_and_updates_cameras():
    results = DenseRandomFlip(prob=1.0, negate_x_keys=('gt_normal', ))(_results())
    assert results['flip']
    assert results['gt_normal'][0, 0, 0] == -1.0
    assert results['gt_depth'][0, 0] == 29.0
    assert results['cam_K'][0, 2] == 30 - 1 - 10
    assert results['cam_extrinsics'][0, 0] == -1.0 and results['cam_extrinsics'][1, 1] == 1.0


def test_flip_keeps_backprojected_points_mirrored():
    results = _results()
    u, z = 3, 2.0
    x_before = (u - results['cam_K'][0, 2]) * z / results['cam_K'][0, 0]
    flipped = DenseRandomFlip(prob=1.0)(results)
    x_after = (30 - 1 - u - flipped['cam_K'][0, 2]) * z / flipped['cam_K'][0, 0]
    assert abs(x_after + x_before) < 1e-9


def test_scale_resizes_maps_and_intrinsics():
    random.seed(0)
    results = DenseRandomScale(prob=1.0, scale_range=(2.0, 2.0))(_results())
    assert results['img'].shape == (40, 60, 3) and results['gt_normal'].shape == (40, 60, 3)
    assert results['gt_mask'].dtype == bool
    np.testing.assert_allclose(results['cam_K'][0], [100.0, 0, 20])


def test_crop_shifts_principal_point_and_keeps_pixels_aligned():
    random.seed(1)
    results = _results()
    out = DenseRandomCropContinuous(prob=1.0, area_range=(0.4, 0.5))(dict(results, gt_depth=results['gt_depth']))
    h, w = out['img'].shape[:2]
    assert h * w < 20 * 30
    y0, x0 = divmod(int(out['gt_depth'][0, 0]), 30)
    assert out['cam_K'][0, 2] == 10 - x0 and out['cam_K'][1, 2] == 8 - y0


def test_photometric_ops_change_only_the_image():
    img = np.full((8, 8, 3), 200, np.uint8)
    assert (RandomSolarize(prob=1.0)(dict(img=img))['img'] == 55).all()
    out = RandomDownUpSample(prob=1.0)(dict(img=np.random.randint(0, 255, (16, 16, 3), np.uint8)))
    assert out['img'].shape == (16, 16, 3)


def test_filter_rejects_too_small_or_too_full_masks():
    mask = np.zeros((10, 10), bool)
    assert FilterDenseSample(min_valid_pixels=16)(dict(gt_mask=mask)) is None
    assert FilterDenseSample(max_coverage=0.96)(dict(gt_mask=~mask)) is None
    mask[:5] = True
    assert FilterDenseSample()(dict(gt_mask=mask)) is not None


def test_pack_builds_chw_inputs_and_dense_sample():
    results = dict(_results(), img_path='a.png', ori_shape=(20, 30), letterbox_pad=(0, 0, 0, 0), gt_scale=2.0)
    packed = PackDenseInputs(target_key='gt_normal', extra_keys=('gt_scale', ))(results)
    sample = packed['data_samples']
    assert packed['inputs'].shape == (3, 20, 30) and packed['inputs'].dtype == torch.uint8
    assert sample.gt_dense.data.shape == (3, 20, 30) and sample.gt_dense.mask.dtype == torch.bool
    assert sample.gt_scale.item() == 2.0 and sample.letterbox_pad == (0, 0, 0, 0)


def test_pack_names_the_missing_key():
    import pytest
    with pytest.raises(KeyError, match='gt_albedo'):
        PackDenseInputs(target_key='gt_albedo')(_results())


def test_pack_without_ground_truth_packs_the_image_and_meta_only():
    image = np.zeros((20, 30, 3), np.uint8)
    packed = PackDenseInputs(target_key='gt_pointmap', extra_keys=('gt_scale', ))(
        dict(img=image, ori_shape=(20, 30), letterbox_pad=(1, 2, 0, 0)))
    sample = packed['data_samples']
    assert 'gt_dense' not in sample and 'gt_scale' not in sample
    assert sample.letterbox_pad == (1, 2, 0, 0) and packed['inputs'].shape == (3, 20, 30)
