import numpy as np
import pytest
import torch

from sapiens2.datasets.transforms.letterbox import Letterbox
from sapiens2.structures.letterbox import letterbox, letterbox_geometry, unletterbox


def test_geometry_keeps_aspect_and_centres():
    (h, w), pad = letterbox_geometry((100, 200), (64, 48))
    assert (h, w) == (24, 48) and pad == (0, 0, 20, 20)
    (h, w), pad = letterbox_geometry((64, 48), (64, 48))
    assert pad == (0, 0, 0, 0)


def test_letterbox_then_unletterbox_recovers_the_image():
    image = np.zeros((50, 100, 3), dtype=np.float32)
    image[:, 50:] = 1.0
    boxed, pad = letterbox(image, (64, 48))
    assert boxed.shape == (64, 48, 3) and pad == (0, 0, 20, 20)
    assert boxed[:20].max() == 0 and boxed[44:].max() == 0
    back = unletterbox(torch.from_numpy(boxed).permute(2, 0, 1), pad, (50, 100))
    assert back.shape == (3, 50, 100)
    assert back[:, :, :45].max() < 0.05 and back[:, :, 55:].min() > 0.95


def test_bool_masks_stay_bool_and_nearest():
    mask = np.zeros((10, 10), dtype=bool)
    mask[:5] = True
    out, pad = letterbox(mask, (20, 40), interpolation='nearest')
    assert out.dtype == bool and out.sum() == 200 and pad == (10, 10, 0, 0)


def test_unletterbox_rejects_padding_larger_than_the_map():
    with pytest.raises(ValueError, match='leaves nothing'):
        unletterbox(torch.zeros(3, 8, 8), (4, 4, 0, 0), (8, 8))


def _results():
    return dict(img=np.zeros((40, 80, 3), np.uint8), gt_mask=np.ones((40, 80), bool),
                gt_depth=np.ones((40, 80), np.float32), cam_K=np.array([[100.0, 0, 40], [0, 100.0, 20], [0, 0, 1]]))


def test_transform_records_padding_and_updates_intrinsics():
    results = Letterbox(size=(64, 48), map_interpolations=dict(gt_mask='nearest', gt_depth='nearest'))(_results())
    assert results['img'].shape == (64, 48, 3) and results['gt_depth'].shape == (64, 48)
    assert results['letterbox_pad'] == (0, 0, 20, 20)
    assert results['letterbox_scale'] == (0.6, 0.6)
    np.testing.assert_allclose(results['cam_K'], [[60.0, 0, 24], [0, 60.0, 32], [0, 0, 1]])
    assert results['gt_mask'][:20].sum() == 0


def test_test_mode_keeps_ground_truth_and_original_intrinsics():
    results = Letterbox(size=(64, 48), test_mode=True)(_results())
    assert results['gt_mask'].shape == (40, 80)
    np.testing.assert_allclose(results['gt_cam_K'], _results()['cam_K'])
    assert results['cam_K'][0, 0] == 60.0
