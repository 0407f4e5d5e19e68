"""Mirror consistency: the mirrored scene renders as the flipped image with flip_indices and swapped part labels."""
from dataclasses import replace

import numpy as np
import pytest

from sapiens2.datasets.synthhumans import mirror_scene, render_scene, scene_for
from sapiens2.datasets.synthhumans.face import HeadModel
from sapiens2.datasets.synthhumans.metainfo import flip_indices, keypoint_names, seg_flip_lut, seg_meta

SIZE = (256, 192)


@pytest.mark.parametrize('index', [0, 1, 2, 3])
def test_mirrored_scene_renders_flipped(index):
    scene = scene_for(3, 'train', index, SIZE)
    r, m = render_scene(scene), render_scene(mirror_scene(scene))
    flip = flip_indices()
    assert np.array_equal(m.mask, r.mask[:, ::-1])
    assert np.array_equal(m.instance, r.instance[:, ::-1])
    assert np.mean(m.seg == seg_flip_lut()[r.seg[:, ::-1]]) > 0.999
    assert np.mean(np.all(m.image == r.image[:, ::-1], axis=-1)) > 0.999
    assert np.mean(np.abs(m.alpha - r.alpha[:, ::-1]) < 1e-5) > 0.999
    assert np.mean(np.all(np.abs(m.foreground - r.foreground[:, ::-1]) < 1e-3, axis=-1)) > 0.999
    assert np.array_equal(m.background, r.background[:, ::-1])
    assert np.allclose(m.depth, r.depth[:, ::-1], atol=1e-5)
    assert np.allclose(m.normal, r.normal[:, ::-1] * np.float32([-1, 1, 1]), atol=1e-4)
    expected = r.keypoints[:, flip].copy()
    expected[..., 0] = SIZE[1] - 1 - expected[..., 0]
    assert np.allclose(m.keypoints[..., :2], expected[..., :2], atol=1e-6)
    assert np.mean(m.keypoints[..., 2] == expected[..., 2]) > 0.99


def test_seg_flip_changes_left_right_labels():
    scene = scene_for(3, 'train', 0, SIZE)
    seg = render_scene(scene).seg
    swapped = seg_flip_lut()[seg]
    assert (swapped != seg).any()


def test_face_layout_is_mirror_symmetric():
    names, flip = keypoint_names(), flip_indices()
    landmarks = HeadModel(0.08).landmarks()
    assert len(landmarks) >= 238
    for i, name in enumerate(names):
        if name in landmarks:
            partner = landmarks[names[flip[i]]]
            assert np.allclose(landmarks[name], partner * [-1, 1, 1], atol=1e-12), name


def test_left_points_are_on_the_left():
    names = keypoint_names()
    landmarks = HeadModel(0.08).landmarks()
    for name, p in landmarks.items():
        if name.startswith(('l_', 'left_')) or '_l_' in name:
            assert p[0] > 0, name
        if name.startswith(('r_', 'right_')) or '_r_' in name:
            assert p[0] < 0, name
    assert all(n in names for n in landmarks)


def test_anatomical_left_is_image_right_when_facing_the_camera():
    """Left/right names follow the person: facing the camera, their left side appears on the image right."""
    names = keypoint_names()
    ids = {n: i for i, n in enumerate(names)}
    for index in range(3):
        scene = scene_for(11, 'train', index, SIZE)
        first = scene.persons[0]
        central = {**first.pose.central, 'spine_twist': 0.0, 'head_yaw': 0.0}
        person = replace(first, yaw=np.pi, pose=replace(first.pose, central=central))
        r = render_scene(replace(scene, persons=(person, )))
        kps = r.keypoints[0]
        for part in ('shoulder', 'hip', 'eye', 'ear'):
            assert kps[ids[f'left_{part}'], 0] > kps[ids[f'right_{part}'], 0], part
        seg_id = {n: i for i, n in enumerate(seg_meta()['class_names'])}
        xs = np.arange(SIZE[1])[None, :].repeat(SIZE[0], 0)
        left, right = xs[r.seg == seg_id['Left_Upper_Leg']], xs[r.seg == seg_id['Right_Upper_Leg']]
        if len(left) and len(right):
            assert left.mean() > right.mean()
