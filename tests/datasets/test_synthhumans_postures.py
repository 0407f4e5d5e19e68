"""posture_ratio: some people sit, crouch or bend; only their poses change, the feet stay level, mirror-consistent
(the manifest: test_synthhumans_manifest_options.py)."""
from dataclasses import replace

import numpy as np
import pytest

from sapiens2.datasets.synthhumans import mirror_scene, render_scene, scene_for
from sapiens2.datasets.synthhumans.mannequin import POSTURES, sample_pose, sample_shape, skeleton, with_posture
from sapiens2.datasets.synthhumans.properties import scene_properties
from tools.dataset_converters.make_synthhumans import main as make_synthhumans
from tools.dataset_converters.make_synthhumans import parse_args

SIZE = (96, 72)
SMALL = dict(num_train=2, num_val=1, size=(64, 48), rgb_only=True)


def _skeletons(kind: str, count: int = 20):
    rng = np.random.default_rng(0)
    return [skeleton(sample_shape(rng), with_posture(sample_pose(rng), rng, kind)) for _ in range(count)]


def _foot_tilt(sk, side: str) -> float:
    """Angle (radians) between the sole's normal (the foot frame's y axis) and the vertical."""
    return float(np.arccos(np.clip(sk.frames[f'{side}_foot'][1, 1], -1.0, 1.0)))


def test_postures_change_only_the_poses_of_some_people():
    for index in range(6):
        standing, posed = scene_for(2, 'train', index, SIZE), scene_for(2, 'train', index, SIZE, posture_ratio=1.0)
        assert standing == scene_for(2, 'train', index, SIZE, posture_ratio=0.0)
        assert posed.camera == standing.camera and posed.light == standing.light
        assert posed.background_seed == standing.background_seed
        assert scene_properties(posed) == scene_properties(standing)
        for a, b in zip(posed.persons, standing.persons):
            assert a.pose != b.pose and replace(a, pose=b.pose) == b  # look, shape, place and facing kept
    people = [p for i in range(40) for p in zip(scene_for(0, 'val', i, SIZE).persons,
                                                scene_for(0, 'val', i, SIZE, posture_ratio=0.5).persons)]
    assert 0.3 < np.mean([a.pose != b.pose for a, b in people]) < 0.7


def test_each_posture_is_what_its_name_says():
    for sk in _skeletons('sitting'):  # thighs about level: the knees near hip height, in front of the hips
        for side in ('left', 'right'):
            hip, knee = sk.joints[f'{side}_hip'], sk.joints[f'{side}_knee']
            assert abs(knee[1] - hip[1]) < 0.45 * sk.dims['thigh'] and knee[2] - hip[2] > 0.8 * sk.dims['thigh']
    rng = np.random.default_rng(0)
    standing = [skeleton(sample_shape(rng), sample_pose(rng)) for _ in range(20)]
    for sk, up in zip(_skeletons('crouching'), standing):  # the hips far lower above the feet than standing
        ankles = min(sk.joints['left_ankle'][1], sk.joints['right_ankle'][1])
        up_ankles = min(up.joints['left_ankle'][1], up.joints['right_ankle'][1])
        assert -ankles < 0.6 * -up_ankles
    for sk in _skeletons('bending'):  # the chest leans forward, ahead of the hips
        assert sk.joints['neck_base'][2] > 0.45 * sk.dims['spine']
    for kind in POSTURES:  # soles within 50 degrees of the ground (abduction and toe-out tilt them a little)
        tilts = [_foot_tilt(sk, side) for sk in _skeletons(kind, 100) for side in ('left', 'right')]
        assert np.median(tilts) < np.radians(25) and max(tilts) < np.radians(50), kind


def test_posed_scene_renders_and_mirrors():
    scene = scene_for(3, 'train', 1, SIZE, posture_ratio=1.0)
    r, m = render_scene(scene), render_scene(mirror_scene(scene))
    assert r.mask.any() and len(r.keypoints) == len(scene.persons)
    assert np.mean(np.all(np.abs(m.image.astype(int) - r.image[:, ::-1]) <= 1, axis=-1)) > 0.995


def test_bad_ratio_and_command_line_flag(tmp_path):
    with pytest.raises(ValueError, match='posture_ratio .* between 0 and 1; got 1.5'):
        scene_for(0, 'train', 0, SIZE, posture_ratio=1.5)
    with pytest.raises(SystemExit, match='error: posture_ratio .* got -0.5'):  # before anything is written
        make_synthhumans(['--out', str(tmp_path / 'synth'), '--posture-ratio', '-0.5'])
    assert not (tmp_path / 'synth').exists()
    assert parse_args(['--posture-ratio', '0.4']).posture_ratio == 0.4
    assert parse_args([]).posture_ratio == 0.0
