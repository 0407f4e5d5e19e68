"""Seg transforms: flip label swap (mmcv RandomFlip), background compositing, blur, noise, the full pipeline."""
from pathlib import Path

import cv2
import numpy as np
import pytest
from mmcv.transforms import Compose
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmseg.registry import TRANSFORMS

import sapiens2.datasets.seg  # noqa: F401  (registers the transforms)
from sapiens2.datasets.seg import seg29_flip_pairs
from sapiens2.datasets.seg.random_background import fit_background, reinhard_transfer

REPO = Path(__file__).resolve().parents[2]
SEG_CONFIG = str(REPO / 'configs/seg/sapiens2_0.4b_seg_bodypart29-1024x768.py')


def sample(height=8, width=6):
    rng = np.random.default_rng(0)
    labels = np.zeros((height, width), np.uint8)
    labels[2:6, 1:3] = 6  # Left_Hand on the left
    labels[2:6, 3:5] = 13  # Lower_Clothing (no mirror class)
    image = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
    return dict(img=image, gt_seg_map=labels, seg_fields=['gt_seg_map'], img_shape=(height, width))


def test_flip_swaps_left_right_labels():
    flip = TRANSFORMS.build(dict(type='RandomFlip', prob=1.0, direction='horizontal',
                                 swap_seg_labels=[list(p) for p in seg29_flip_pairs()]))
    original = sample()
    out = flip(dict(original, gt_seg_map=original['gt_seg_map'].copy(), img=original['img'].copy()))
    mirrored = original['gt_seg_map'][:, ::-1]
    assert (out['gt_seg_map'][mirrored == 6] == 15).all()  # Left_Hand -> Right_Hand
    assert (out['gt_seg_map'][mirrored == 13] == 13).all()
    assert (out['gt_seg_map'][mirrored == 0] == 0).all()
    np.testing.assert_array_equal(out['img'], original['img'][:, ::-1])


def test_config_pipeline_flip_uses_all_pairs():
    cfg = Config.fromfile(SEG_CONFIG)
    flips = [t for t in cfg.train_pipeline if t['type'] == 'RandomFlip']
    assert len(flips) == 1 and flips[0]['swap_seg_labels'] == [list(p) for p in seg29_flip_pairs()]


def test_random_background_replaces_only_background(tmp_path):
    cv2.imwrite(str(tmp_path / 'bg.jpg'), np.full((20, 40, 3), (10, 200, 30), np.uint8))
    transform = TRANSFORMS.build(dict(type='RandomBackground', bg_dir=str(tmp_path), prob=1.0, color_transfer=False))
    data = sample()
    out = transform(dict(data, img=data['img'].copy()))
    person = data['gt_seg_map'] > 0
    np.testing.assert_array_equal(out['img'][person], data['img'][person])
    assert (np.abs(out['img'][~person].astype(int) - (10, 200, 30)) <= 1).all()
    np.testing.assert_array_equal(transform(dict(data, img=data['img'].copy(), is_itw=True))['img'], data['img'])


def test_reinhard_transfer_moves_foreground_statistics():
    rng = np.random.default_rng(1)
    image = rng.integers(0, 120, (16, 16, 3), dtype=np.uint8)
    background = rng.integers(120, 255, (16, 16, 3), dtype=np.uint8)
    mask = np.zeros((16, 16), bool)
    mask[4:12, 4:12] = True
    moved = reinhard_transfer(image, background, mask)
    to_lab = lambda x: cv2.cvtColor(x.astype(np.float32) / 255, cv2.COLOR_BGR2Lab)  # noqa: E731
    assert np.allclose(to_lab(moved)[mask].mean(0), to_lab(background).reshape(-1, 3).mean(0), atol=2.0)


def test_fit_background_crops_or_stretches():
    assert fit_background(np.zeros((10, 40, 3), np.uint8), 20, 30).shape == (20, 30, 3)
    assert fit_background(np.zeros((40, 10, 3), np.uint8), 20, 30).shape == (20, 30, 3)


def test_random_background_bad_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match='bg_dir'):
        TRANSFORMS.build(dict(type='RandomBackground', bg_dir=str(tmp_path / 'missing')))
    with pytest.raises(FileNotFoundError, match='no'):
        TRANSFORMS.build(dict(type='RandomBackground', bg_dir=str(tmp_path)))


@pytest.mark.parametrize('name, kwargs', [('RandomGaussianBlur', {}), ('RandomGaussianNoise', {})])
def test_blur_and_noise_touch_only_the_image(name, kwargs):
    data = sample(32, 32)
    always = TRANSFORMS.build(dict(type=name, prob=1.0, **kwargs))
    never = TRANSFORMS.build(dict(type=name, prob=0.0, **kwargs))
    out = always(dict(data, img=data['img'].copy()))
    assert out['img'].dtype == np.uint8 and out['img'].shape == data['img'].shape
    assert not np.array_equal(out['img'], data['img'])
    np.testing.assert_array_equal(out['gt_seg_map'], data['gt_seg_map'])
    np.testing.assert_array_equal(never(dict(data, img=data['img'].copy()))['img'], data['img'])


def test_noise_variance_in_range():
    np.random.seed(0)
    image = np.full((64, 64, 3), 128, np.uint8)
    out = TRANSFORMS.build(dict(type='RandomGaussianNoise', prob=1.0, var_range=(9.0, 9.0)))(dict(img=image))
    assert out['img'].astype(np.float32).std() == pytest.approx(3.0, rel=0.1)


def test_official_train_pipeline_outputs_1024x768():
    np.random.seed(0)
    cfg = Config.fromfile(SEG_CONFIG)
    init_default_scope(cfg.default_scope)  # RandomApply builds its children in the default scope
    pipeline = Compose([TRANSFORMS.build(t) for t in cfg.train_pipeline[2:]])
    data = sample(200, 150)
    data.update(ori_shape=(200, 150), img_path='x.png', seg_map_path='x.png', reduce_zero_label=False)
    packed = pipeline(data)
    assert tuple(packed['inputs'].shape) == (3, 1024, 768)
    labels = packed['data_samples'].gt_sem_seg.data
    assert labels.shape == (1, 1024, 768)
    assert set(labels.unique().tolist()) <= set(range(29)) | {255}


def test_check_seg_labels_names_file_and_ids():
    check = TRANSFORMS.build(dict(type='CheckSegLabels', num_classes=29, ignore_index=255))
    ok = dict(gt_seg_map=np.array([[0, 28], [255, 3]], np.uint8), seg_map_path='x/ok.png')
    assert check(ok) is ok
    bad = dict(gt_seg_map=np.array([[0, 29], [40, 40]], np.uint8), seg_map_path='x/bad.png')
    with pytest.raises(ValueError, match=r'x/bad.png: label ids \[29, 40\] \(pixels: \{29: 1, 40: 2\}\)'):
        check(bad)
    with pytest.raises(ValueError, match=r'label ids \[-1\]'):
        check(dict(gt_seg_map=np.array([[0, -1]], np.int64), seg_map_path='x/neg.png'))
    with pytest.raises(ValueError, match='after the source remap'):
        check(dict(bad, label_map={1: 0}))
