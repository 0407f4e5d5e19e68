"""patterned_clothes: prints and folds only on the garments, the same people and labels, mirror-consistent (the
manifest: test_synthhumans_manifest_options.py)."""

import numpy as np

from sapiens2.datasets.synthhumans import mirror_scene, render_scene, scene_for
from sapiens2.datasets.synthhumans.clothes import GARMENTS, print_clothes
from sapiens2.datasets.synthhumans.metainfo import seg_ids
from sapiens2.datasets.synthhumans.properties import scene_properties
from tools.dataset_converters.make_synthhumans import parse_args

SIZE = (96, 72)
SMALL = dict(num_train=2, num_val=1, size=(64, 48), rgb_only=True)
LABELS = ('mask', 'instance', 'seg', 'normal', 'depth', 'alpha', 'keypoints', 'bboxes')


def _garment_pixels(rendering) -> np.ndarray:
    ids = seg_ids()
    return np.isin(rendering.seg, [ids[name] for labels in GARMENTS for name in labels])


def test_clothes_change_only_the_garments_albedo_and_the_image():
    plain, patterned = scene_for(1, 'train', 2, SIZE), scene_for(1, 'train', 2, SIZE, patterned_clothes=True)
    assert patterned.persons == plain.persons and patterned.camera == plain.camera
    assert scene_properties(patterned) == scene_properties(plain)
    p, c = render_scene(plain), render_scene(patterned)
    for name in LABELS:
        assert np.array_equal(getattr(p, name), getattr(c, name)), name
    garments = _garment_pixels(p)
    assert garments.sum() > 100
    assert np.array_equal(p.albedo[~garments], c.albedo[~garments])  # skin, hair and face keep their colours
    assert np.any(p.albedo[garments] != c.albedo[garments])
    assert not np.array_equal(p.image, c.image)


def test_a_print_is_more_than_one_colour_and_leaves_the_rest_alone():
    ids = seg_ids()
    seg = np.zeros(SIZE, np.uint8)
    seg[20:80, 10:60] = ids['Upper_Clothing']
    seg[80:90, 10:60] = ids['Face_Neck']
    instance = (seg > 0).astype(np.uint8)
    albedo = np.full(SIZE + (3, ), 120, np.uint8)
    printed = [print_clothes(seed, SIZE, False, seg, instance, albedo) for seed in range(8)]
    shirt = seg == ids['Upper_Clothing']
    for out, folds in printed:
        assert np.array_equal(out[~shirt], albedo[~shirt]) and np.all(folds[~shirt] == 1)
        assert folds[shirt].std() > 0.01  # folds shade every garment
    assert sum(out[shirt].reshape(-1, 3).std(0).max() > 5 for out, _ in printed) >= 4  # most garments get a print
    again, _ = print_clothes(3, SIZE, False, seg, instance, albedo)
    assert np.array_equal(again, printed[3][0])


def test_patterned_scene_mirrors():
    scene = scene_for(3, 'train', 1, SIZE, patterned_clothes=True)
    r, m = render_scene(scene), render_scene(mirror_scene(scene))
    assert np.mean(np.all(m.albedo == r.albedo[:, ::-1], axis=-1)) > 0.995
    assert np.mean(np.all(np.abs(m.image.astype(int) - r.image[:, ::-1]) <= 1, axis=-1)) > 0.995


def test_command_line_flag():
    assert parse_args(['--patterned-clothes']).patterned_clothes
    assert not parse_args([]).patterned_clothes
