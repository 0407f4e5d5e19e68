"""308 -> COCO-17 / COCO-WholeBody / OpenPose: layouts checked against mmpose's metadata, recipes against the 308
names, and mirror symmetry (a mirrored input maps to the mirrored output)."""
import json

import numpy as np
import pytest
from mmpose.datasets.datasets.utils import parse_pose_metainfo

from sapiens2.metainfo import load_metainfo
from sapiens2.structures.keypoint_formats import (
    FORMAT_NAMES,
    convert_keypoints,
    ibug68_flip,
    keypoint_format,
    to_openpose_json,
)

META = load_metainfo('keypoints308.json')
NAMES = META['keypoint_names']
FLIP = META['flip_indices']
MMPOSE_FILES = {'coco17': 'configs/_base_/datasets/coco.py',
                'coco_wholebody': 'configs/_base_/datasets/coco_wholebody.py'}
# Documented in docs/pose.md: the 68-point face points without a 308 counterpart.
UNMAPPED_FACE68 = [*range(0, 8), *range(9, 17), 37, 38, 40, 41, 43, 44, 46, 47, 49, 50, 52, 53, 55, 56, 58, 59]


def mmpose_meta(name):
    return parse_pose_metainfo(dict(from_file=MMPOSE_FILES[name]))


def random_308(batch=3, seed=0, width=200.0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, width, (batch, 308, 2)), rng.uniform(0.05, 1.0, (batch, 308))


@pytest.mark.parametrize('name', ['coco17', 'coco_wholebody'])
def test_layouts_are_mmposes(name):
    meta = mmpose_meta(name)
    fmt = keypoint_format(name)
    assert list(fmt.keypoint_names) == [meta['keypoint_id2name'][i] for i in range(meta['num_keypoints'])]
    assert fmt.flip_indices == list(meta['flip_indices'])


def test_ibug_face_flip_is_coco_wholebodys():
    flips = mmpose_meta('coco_wholebody')['flip_indices']
    assert [ibug68_flip(i) for i in range(68)] == [flips[23 + i] - 23 for i in range(68)]
    assert ibug68_flip(68) == 69


@pytest.mark.parametrize('name', FORMAT_NAMES)
def test_recipes_use_308_names_and_sum_to_one(name):
    fmt = keypoint_format(name)
    assert len(set(fmt.keypoint_names)) == fmt.num_keypoints == len(fmt.recipes)
    for recipe in fmt.recipes:
        assert all(source in NAMES for source, _ in recipe)
        assert not recipe or abs(sum(weight for _, weight in recipe) - 1) < 1e-12
    flips = fmt.flip_indices
    assert all(flips[flips[i]] == i for i in range(fmt.num_keypoints))


@pytest.mark.parametrize('name', FORMAT_NAMES)
def test_mirrored_input_maps_to_mirrored_output(name):
    fmt = keypoint_format(name)
    keypoints, scores = random_308()
    mirrored = np.stack([200.0 - keypoints[:, FLIP, 0], keypoints[:, FLIP, 1]], axis=-1)
    out, out_scores = fmt.convert(keypoints, scores)
    flipped, flipped_scores = fmt.convert(mirrored, scores[:, FLIP])
    flips, mapped = np.array(fmt.flip_indices), fmt.mapped
    expected = np.stack([200.0 - out[:, flips, 0], out[:, flips, 1]], axis=-1)
    np.testing.assert_allclose(flipped[:, mapped], expected[:, mapped], atol=1e-3)
    np.testing.assert_allclose(flipped_scores, out_scores[:, flips], atol=1e-6)
    assert np.array_equal(mapped, mapped[flips])


def test_coco17_is_the_same_names():
    keypoints, scores = random_308()
    out, out_scores = convert_keypoints(keypoints, scores, 'coco17')
    index = [NAMES.index(n) for n in keypoint_format('coco17').keypoint_names]
    assert index == [0, 1, 2, 3, 4, 5, 6, 7, 8, 62, 41, 9, 10, 11, 12, 13, 14]
    np.testing.assert_allclose(out, keypoints[:, index], rtol=1e-6)
    np.testing.assert_allclose(out_scores, scores[:, index], rtol=1e-6)


def test_wholebody_contains_the_official_mapping_and_documented_gaps():
    fmt = keypoint_format('coco_wholebody')
    for src, dst in META['coco_wholebody_to_goliath_mapping'].items():
        assert fmt.recipes[int(src)] == ((NAMES[dst], 1.0), )
    assert fmt.unmapped_names == [f'face-{i}' for i in UNMAPPED_FACE68]
    assert len(fmt.part_indices('face', mapped_only=True)) == 68 - len(UNMAPPED_FACE68) == 36
    for side in ('left', 'right'):  # the hands are complete: root = wrist, <finger>1 = <finger>_third_joint
        assert len(fmt.part_indices(f'{side}_hand', mapped_only=True)) == 21
        assert fmt.recipes[fmt.keypoint_names.index(f'{side}_hand_root')] == ((f'{side}_wrist', 1.0), )
        assert fmt.recipes[fmt.keypoint_names.index(f'{side}_thumb1')] == ((f'{side}_thumb_third_joint', 1.0), )


def test_third_joint_sigmas_are_coco_wholebody_finger1_sigmas():
    """Why <finger>1 maps to <finger>_third_joint: the 308 metadata gives the third joints COCO-WholeBody's
    <finger>1 sigmas."""
    wholebody = mmpose_meta('coco_wholebody')
    sigma = dict(zip(NAMES, META['sigmas']))
    for side in ('left', 'right'):
        for finger in ('thumb', 'forefinger', 'middle_finger', 'ring_finger', 'pinky_finger'):
            coco = wholebody['sigmas'][wholebody['keypoint_name2id'][f'{side}_{finger}1']]
            assert sigma[f'{side}_{finger}_third_joint'] == pytest.approx(coco)


def test_derived_points_and_scores():
    keypoints, scores = random_308()
    fmt = keypoint_format('body25')
    out, out_scores = fmt.convert(keypoints, scores)
    neck, hip = fmt.keypoint_names.index('Neck'), fmt.keypoint_names.index('MidHip')
    ls, rs, lh, rh = (NAMES.index(n) for n in ('left_shoulder', 'right_shoulder', 'left_hip', 'right_hip'))
    np.testing.assert_allclose(out[:, neck], (keypoints[:, ls] + keypoints[:, rs]) / 2, rtol=1e-6)
    np.testing.assert_allclose(out[:, hip], (keypoints[:, lh] + keypoints[:, rh]) / 2, rtol=1e-6)
    np.testing.assert_allclose(out_scores[:, neck], np.minimum(scores[:, ls], scores[:, rs]), rtol=1e-6)
    assert fmt.kind(neck) == 'derived' and fmt.kind(0) == 'same'
    face = keypoint_format('coco_wholebody')
    root, tip = NAMES.index('center_of_nose_root'), NAMES.index('tip_of_nose')
    out, _ = face.convert(keypoints, scores)
    np.testing.assert_allclose(out[:, 23 + 28], keypoints[:, root] * 2 / 3 + keypoints[:, tip] / 3, rtol=1e-6)


def test_unmapped_points_are_zero_and_unused_nans_do_not_leak():
    keypoints, scores = random_308()
    fmt = keypoint_format('coco_wholebody')
    used = {NAMES.index(source) for recipe in fmt.recipes for source, _ in recipe}
    unused = [i for i in range(308) if i not in used]
    keypoints[:, unused], scores[:, unused] = np.nan, np.nan
    out, out_scores = fmt.convert(keypoints, scores)
    assert np.isfinite(out).all() and np.isfinite(out_scores).all()
    assert (out[:, ~fmt.mapped] == 0).all() and (out_scores[:, ~fmt.mapped] == 0).all()
    assert out.dtype == out_scores.dtype == np.float32 and out.shape == (3, 133, 2)


def test_openpose_json():
    keypoints, scores = random_308(batch=2)
    content = to_openpose_json(keypoints, scores)
    assert content['version'] == 1.3 and len(content['people']) == 2
    person = content['people'][0]
    sizes = {key: len(person[key]) for key in ('pose_keypoints_2d', 'face_keypoints_2d', 'hand_left_keypoints_2d',
                                               'hand_right_keypoints_2d')}
    assert sizes == {'pose_keypoints_2d': 75, 'face_keypoints_2d': 210, 'hand_left_keypoints_2d': 63,
                     'hand_right_keypoints_2d': 63}
    nose = NAMES.index('nose')
    assert person['pose_keypoints_2d'][:3] == pytest.approx([*keypoints[0, nose], scores[0, nose]], abs=1e-4)
    json.dumps(content)


def test_style_and_errors():
    style = keypoint_format('coco17').style()
    assert style['point_colors'].shape == (17, 3) and style['links'].shape == (19, 2)
    assert keypoint_format('openpose').style()['links'].max() < 137
    with pytest.raises(ValueError, match='expected keypoints of shape'):
        convert_keypoints(np.zeros((2, 17, 2)))
    with pytest.raises(ValueError, match="Unknown keypoint format 'coco18'"):
        keypoint_format('coco18')
    assert keypoint_format('coco') is keypoint_format('coco17')


@pytest.mark.parametrize('name, metainfo', [('coco17', 'coco.py'), ('coco_wholebody', 'coco_wholebody.py')])
def test_links_are_drawn_in_the_layout_colours_of_mmpose(name, metainfo):
    """COCO-17 and COCO-WholeBody skeletons in mmpose's own link colours (left limbs green, right orange, the rest
    blue), not in the single colour of their first points."""
    meta = parse_pose_metainfo(dict(from_file=f'configs/_base_/datasets/{metainfo}'))
    style = keypoint_format(name).style()
    body = slice(0, 19)  # the COCO-17 links come first in both
    np.testing.assert_array_equal(style['links'][body], meta['skeleton_links'][body])
    np.testing.assert_array_equal(style['link_colors'][body], meta['skeleton_link_colors'][body])


@pytest.mark.parametrize('name', FORMAT_NAMES)
def test_every_format_draws_its_limbs_in_several_colours(name):
    assert len(np.unique(keypoint_format(name).style()['link_colors'], axis=0)) >= 3
