"""scene_variety='rich': deterministic, labels and properties those of the plain scene, mirror-consistent (the
manifest: test_synthhumans_manifest_options.py); and it takes the colour cast away from what tells two scenes apart."""
import filecmp
import json
import os
import os.path as osp

import numpy as np
import pytest

from sapiens2.datasets.synthhumans import (
    ensure_synthhumans,
    generate_synthhumans,
    mirror_scene,
    render_image,
    render_scene,
    scene_for,
)
from sapiens2.datasets.synthhumans.properties import scene_properties
from sapiens2.datasets.synthhumans.rich_background import render_rich_background
from sapiens2.datasets.synthhumans.rich_lighting import illumination_field
from tests.datasets.opencv_threads import one_opencv_thread

SIZE = (64, 48)
SMALL = dict(num_train=2, num_val=1, size=SIZE)
LABELS = ('mask', 'instance', 'seg', 'albedo', 'normal', 'depth', 'alpha', 'keypoints', 'bboxes')


def _tree(root):
    return sorted(osp.relpath(osp.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_rich_set_is_byte_identical_for_the_same_seed(tmp_path):
    a = generate_synthhumans(str(tmp_path / 'a'), seed=4, scene_variety='rich', **SMALL)
    b = generate_synthhumans(str(tmp_path / 'b'), seed=4, scene_variety='rich', **SMALL)
    assert _tree(a) == _tree(b)
    for rel in _tree(a):
        assert filecmp.cmp(osp.join(a, rel), osp.join(b, rel), shallow=False), rel
    with open(osp.join(a, 'manifest.json')) as f:
        assert json.load(f)['scene_variety'] == 'rich'


def test_rich_scene_keeps_people_labels_and_properties():
    plain, rich = scene_for(2, 'train', 3, SIZE), scene_for(2, 'train', 3, SIZE, 'rich')
    assert rich.variety == 'rich' and plain.variety == 'plain'
    assert rich.persons == plain.persons and rich.camera == plain.camera
    assert scene_properties(rich) == scene_properties(plain)
    p, r = render_scene(plain), render_scene(rich)
    for name in LABELS:
        assert np.array_equal(getattr(p, name), getattr(r, name)), name
    assert not np.array_equal(p.image, r.image)
    assert np.array_equal(render_image(rich), r.image)
    noise = r.image.astype(np.float64) - (r.foreground + (1 - r.alpha[..., None]) * r.background)
    assert np.abs(noise).mean() < 6  # image = foreground + (1 - alpha) * background + sensor noise


def test_rich_scene_mirrors():
    scene = scene_for(3, 'train', 1, SIZE, 'rich')
    r, m = render_scene(scene), render_scene(mirror_scene(scene))
    assert np.array_equal(m.background, r.background[:, ::-1])
    assert np.mean(np.all(m.image == r.image[:, ::-1], axis=-1)) > 0.999


def test_unknown_variety_is_refused(tmp_path):
    with pytest.raises(ValueError, match='variety'):
        scene_for(0, 'train', 0, SIZE, 'fancy')
    with pytest.raises(ValueError, match='scene-variety'):
        ensure_synthhumans(str(tmp_path / 'x'), scene_variety='fancy', **SMALL)


def test_rich_room_has_many_colours_and_no_scene_wide_cast():
    """Within a room the colour varies far more than between the rooms' mean colours (one colour per wall, as in
    plain rooms, would make the mean colour tell rooms apart)."""
    rooms = np.stack([render_rich_background(seed, SIZE).astype(np.float64) for seed in range(24)])
    assert np.array_equal(rooms[0], render_rich_background(0, SIZE))
    means = rooms.mean((1, 2))
    within = rooms.std((1, 2)).mean()
    assert within > 2 * means.std(0).max()
    hues = [len(np.unique(room.reshape(-1, 3) // 64, axis=0)) for room in rooms]
    assert min(hues) >= 12  # coarse colour cells (64 in all) a room covers; plain rooms cover 7 or more


def test_illumination_field_varies_within_and_has_no_overall_tint():
    field = illumination_field(5, SIZE)
    assert field.shape == SIZE + (3, )
    mean = field.mean((0, 1))
    assert np.allclose(mean, mean[0])  # the same mean gain in every channel
    assert (field.max((0, 1)) - field.min((0, 1))).min() > 0.1  # but the colour of the light varies over the image
    assert np.array_equal(illumination_field(5, SIZE, flip=True), field[:, ::-1])


def test_rich_render_is_independent_of_opencv_threads():
    scene = scene_for(1, 'train', 2, SIZE, 'rich')
    with one_opencv_thread():
        single = render_image(scene)
    assert np.array_equal(single, render_image(scene))
