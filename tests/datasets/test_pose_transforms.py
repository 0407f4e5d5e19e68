"""Pose transforms mmpose lacks: the official affine, coarse dropout, random blur, part weights, empty crops."""
import cv2
import numpy as np
import pytest
from mmpose.registry import TRANSFORMS
from mmpose.structures.bbox import get_udp_warp_matrix

import sapiens2.datasets  # noqa: F401  (registers the transforms, so that this file also passes on its own)
from sapiens2.datasets.synthhumans.photos import PhotoBackgroundError


def results_with(img: np.ndarray, keypoints: np.ndarray, center, scale) -> dict:
    return dict(img=img, keypoints=keypoints[None].astype(np.float32), keypoints_visible=np.ones((1, len(keypoints))),
                bbox_center=np.array([center], np.float32), bbox_scale=np.array([scale], np.float32))


@pytest.mark.parametrize('scale, flag', [((90, 120), cv2.INTER_AREA), ((30, 40), cv2.INTER_CUBIC)])
def test_affine_uses_official_interpolation(scale, flag):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 255, (100, 80, 3), dtype=np.uint8)
    t = TRANSFORMS.build(dict(type='Sapiens2TopdownAffine', input_size=(48, 64)))
    out = t(results_with(img, np.array([[40., 50.]]), (40, 50), scale))
    mat = get_udp_warp_matrix(np.array([40., 50.]), np.array(scale, np.float32), 0., output_size=(48, 64))
    np.testing.assert_array_equal(out['img'], cv2.warpAffine(img, mat, (48, 64), flags=flag))
    assert out['input_size'] == (48, 64)
    np.testing.assert_allclose(out['transformed_keypoints'][0, 0], [23.5, 31.5], atol=1e-3)  # centre -> centre


def test_affine_drop_outside_marks_keypoints_invisible():
    img = np.zeros((100, 80, 3), np.uint8)
    kpts = np.array([[40., 50.], [0., 0.], [79., 99.]])
    for drop, vis in ((True, [1, 0, 0]), (False, [1, 1, 1])):
        t = TRANSFORMS.build(dict(type='Sapiens2TopdownAffine', input_size=(48, 64), drop_outside=drop))
        out = t(results_with(img.copy(), kpts, (40, 50), (30, 40)))
        np.testing.assert_array_equal(out['keypoints_visible'][0], vis)
        if drop:
            assert np.all(out['transformed_keypoints'][0, 1:] == 0)


def test_coarse_dropout_blanks_one_hole_of_the_right_size():
    np.random.seed(0)
    t = TRANSFORMS.build(dict(type='CoarseDropout', hole_size=(0.2, 0.4), num_holes=1, prob=1.0))
    for _ in range(20):
        img = np.full((100, 80, 3), 255, np.uint8)
        out = t(dict(img=img))['img']
        ys, xs = np.nonzero(out[..., 0] == 0)
        assert 20 <= np.ptp(ys) + 1 <= 40 and 16 <= np.ptp(xs) + 1 <= 32
        assert (out[..., 0] == 0).sum() == (np.ptp(ys) + 1) * (np.ptp(xs) + 1)  # one rectangle
        assert img.min() == 255  # input untouched
    assert t(dict(img=np.ones((10, 10, 3), np.uint8))) is not None
    with pytest.raises(ValueError, match='hole_size'):
        TRANSFORMS.build(dict(type='CoarseDropout', hole_size=(0.5, 0.2)))


@pytest.mark.parametrize('mode', ['mean', 'median'])
def test_random_blur(mode):
    np.random.seed(0)
    img = np.random.default_rng(0).integers(0, 255, (32, 32, 3), dtype=np.uint8)
    always = TRANSFORMS.build(dict(type='RandomBlur', mode=mode, prob=1.0))
    never = TRANSFORMS.build(dict(type='RandomBlur', mode=mode, prob=0.0))
    blurred = always(dict(img=img.copy()))['img']
    assert blurred.shape == img.shape and blurred.std() < img.std()
    np.testing.assert_array_equal(never(dict(img=img.copy()))['img'], img)
    with pytest.raises(ValueError, match='mode'):
        TRANSFORMS.build(dict(type='RandomBlur', mode='gauss'))


def test_annotated_image_size_check():
    check = TRANSFORMS.build(dict(type='CheckAnnotatedImageSize', ann_file='ann.json'))
    same = dict(img_path='a.png', img_id=3, ori_shape=(64, 48), annotated_img_shape=(64, 48))
    assert check(dict(same)) == same
    assert check(dict(img_path='a.png', ori_shape=(64, 48))) is not None  # no annotated size: not checked
    with pytest.raises(ValueError, match=r'image a\.png is 48x64 \(width x height\) but ann\.json gives 48x32 for '
                       r'image 3'):
        check(dict(same, annotated_img_shape=(32, 48)))


def test_part_keypoint_weights_scale_the_target_weights_of_a_part():
    """The face weight reaches the loss's target weights through mmpose's own GenerateTarget."""
    partitions = dict(body=[0, 1], face=[2, 3, 4])
    weigh = TRANSFORMS.build(dict(type='PartKeypointWeights', partitions=partitions, weights=dict(face=0.1)))
    codec = dict(type='MSRAHeatmap', input_size=(48, 64), heatmap_size=(12, 16), sigma=2.0)
    target = TRANSFORMS.build(dict(type='GenerateTarget', encoder=codec, use_dataset_keypoint_weights=True))
    keypoints = np.array([[10., 10.], [20., 30.], [30., 20.], [25., 25.], [12., 40.]])
    results = dict(keypoints=keypoints[None].astype(np.float32), keypoints_visible=np.ones((1, 5), np.float32),
                   transformed_keypoints=keypoints[None].astype(np.float32),
                   dataset_keypoint_weights=np.array([1., 2., 1., 1., 1.], np.float32))
    out = target(weigh(results))
    np.testing.assert_allclose(out['keypoint_weights'][0], [1., 2., .1, .1, .1], rtol=1e-6)


def test_part_keypoint_weights_name_an_unknown_part_or_index():
    with pytest.raises(KeyError, match="weights name parts \\['hands'\\]"):
        TRANSFORMS.build(dict(type='PartKeypointWeights', partitions=dict(face=[0]), weights=dict(hands=0.5)))
    weigh = TRANSFORMS.build(dict(type='PartKeypointWeights', partitions=dict(face=[7]), weights=dict(face=0.5)))
    with pytest.raises(ValueError, match="part 'face' has keypoint index 7, but the sample has 2 keypoints"):
        weigh(dict(keypoints=np.zeros((1, 2, 2), np.float32)))


def empty_crop_results(visible) -> dict:
    """A 64x48 crop with two keypoints after mmpose's GenerateTarget (the first one weighted 2 by the dataset)."""
    codec = dict(type='MSRAHeatmap', input_size=(48, 64), heatmap_size=(12, 16), sigma=2.0)
    target = TRANSFORMS.build(dict(type='GenerateTarget', encoder=codec, use_dataset_keypoint_weights=True))
    keypoints = np.array([[[10., 10.], [20., 30.]]], np.float32)
    return target(dict(img=np.full((64, 48, 3), 7, np.uint8), keypoints=keypoints, transformed_keypoints=keypoints,
                       keypoints_visible=np.array([visible], np.float32),
                       dataset_keypoint_weights=np.array([2., 1.], np.float32)))


@pytest.mark.parametrize('photo_prob', [0.0, 1.0])
def test_random_empty_crop_gives_a_picture_without_the_person_and_empty_weighted_targets(tmp_path, photo_prob):
    """An empty crop's heatmaps are zero and every keypoint is weighted, the invisible one too, so the loss pulls the
    scores of a picture without a person down; its picture is cut from the photo folder or is a smooth colour."""
    stripes = np.zeros((90, 120, 3), np.uint8)
    stripes[:, (np.arange(120) // 10) % 2 == 1] = 255  # vertical stripes, 10 px wide
    cv2.imwrite(str(tmp_path / 'stripes.png'), stripes)
    empty = TRANSFORMS.build(dict(type='RandomEmptyCrop', prob=1.0, photo_prob=photo_prob, photo_folder=str(tmp_path)))
    np.random.seed(0)
    before = empty_crop_results(visible=[1, 0])
    assert before['heatmaps'].max() > 0.5 and before['keypoint_weights'][0].tolist() == [2, 0]
    out = empty(dict(before, heatmaps=before['heatmaps'].copy()))
    assert out['img'].shape == (64, 48, 3) and out['img'].dtype == np.uint8
    assert out['heatmaps'].shape == before['heatmaps'].shape and not out['heatmaps'].any()
    np.testing.assert_array_equal(out['keypoint_weights'], [[2., 1.]])
    column_steps = np.abs(np.diff(out['img'].mean(axis=(0, 2))))  # (W - 1, ): the stripes' edges, or a smooth ramp
    assert (column_steps.max() > 20) == bool(photo_prob)


def test_random_empty_crop_needs_photos_only_when_it_cuts_them(tmp_path):
    """Without photos it refuses to be built (before a run's first iteration), unless it never cuts one."""
    np.random.seed(0)
    flat = TRANSFORMS.build(dict(type='RandomEmptyCrop', prob=1.0, photo_prob=0.0, photo_folder=str(tmp_path)))
    assert not flat(empty_crop_results(visible=[1, 1]))['heatmaps'].any()
    with pytest.raises(PhotoBackgroundError, match=f'{tmp_path} holds no image'):
        TRANSFORMS.build(dict(type='RandomEmptyCrop', prob=1.0, photo_prob=1.0, photo_folder=str(tmp_path)))


def test_random_empty_crop_leaves_most_crops_alone_and_needs_targets():
    np.random.seed(0)
    empty = TRANSFORMS.build(dict(type='RandomEmptyCrop', prob=0.1, photo_prob=0.0))
    kept = sum(empty(empty_crop_results(visible=[1, 1]))['heatmaps'].any() for _ in range(200))
    assert 160 <= kept <= 195
    with pytest.raises(KeyError, match='put it after GenerateTarget'):
        TRANSFORMS.build(dict(type='RandomEmptyCrop', prob=1.0))(dict(img=np.zeros((8, 8, 3), np.uint8)))
    with pytest.raises(ValueError, match='prob is a probability between 0 and 1, got 1.5'):
        TRANSFORMS.build(dict(type='RandomEmptyCrop', prob=1.5))


def test_pose_demo_config_greys_the_empty_crops_too():
    """The pose demo config turns a fifth of its crops grey (mmcv's RandomGrayscale with BGR luma weights), after the
    crops without a person: were only person crops grey, grey alone would tell the model a person is there."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope

    from tests import DATA_DIR
    init_default_scope('mmpose')
    cfg = Config.fromfile(str(DATA_DIR.parent.parent / 'configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py'))
    steps = [s for s in cfg.train_dataloader.dataset.pipeline if s['type'] in ('RandomEmptyCrop', 'RandomGrayscale')]
    assert [s['type'] for s in steps] == ['RandomEmptyCrop', 'RandomGrayscale'] and steps[1]['prob'] == 0.2
    empty = TRANSFORMS.build(dict(steps[0], prob=1.0, photo_prob=0.0))
    grey = TRANSFORMS.build(dict(steps[1], prob=1.0))
    np.random.seed(0)
    crop = empty(empty_crop_results(visible=[1, 1]))
    assert not crop['heatmaps'].any() and np.ptp(crop['img'].astype(int), axis=2).max() > 0  # a coloured empty crop
    out = grey(dict(crop, img=crop['img'].copy()))['img']
    assert out.shape == crop['img'].shape and np.ptp(out.astype(int), axis=2).max() == 0
    red = np.zeros((2, 2, 3), np.uint8)
    red[..., 2] = 200  # BGR: pure red, luma 0.299 * 200
    assert grey(dict(img=red))['img'][0, 0].tolist() == [59, 59, 59]


@pytest.mark.parametrize('num_keypoints, weighted', [(17, []), (133, list(range(23, 91))), (25, [])],
                         ids=['coco17', 'coco_wholebody', 'body25'])
def test_part_keypoint_weights_of_the_308_parts_follow_a_keypoint_format(num_keypoints, weighted):
    """The 308-keypoint recipe's face weight on a dataset in COCO-17 (all body: nothing weighted), COCO-WholeBody
    (its 68 face points) or BODY_25: a config inheriting the recipe trains on them unchanged."""
    from sapiens2.datasets.pose import keypoints308_partitions
    weigh = TRANSFORMS.build(dict(type='PartKeypointWeights', partitions=keypoints308_partitions(),
                                  weights=dict(face=0.1)))
    out = weigh(dict(keypoints=np.zeros((1, num_keypoints, 2), np.float32)))
    expected = np.ones(num_keypoints, np.float32)
    expected[weighted] = 0.1
    np.testing.assert_allclose(out['dataset_keypoint_weights'], expected)
    weigh.check_layout(num_keypoints)  # no error


def test_part_keypoint_weights_on_a_layout_it_cannot_follow_names_the_fix():
    from sapiens2.datasets.pose import keypoints308_partitions
    weigh = TRANSFORMS.build(dict(type='PartKeypointWeights', partitions=keypoints308_partitions(),
                                  weights=dict(face=0.1)))
    with pytest.raises(ValueError, match=r"has 10 keypoints .*step\['type'\] != 'PartKeypointWeights'"):
        weigh.check_layout(10)
