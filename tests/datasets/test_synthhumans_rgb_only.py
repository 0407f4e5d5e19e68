"""RGB-only SynthHumans sets: only the images, the same pixels as a full set, and the no-data-loss rule holds."""
import filecmp
import json
import os
import os.path as osp

import numpy as np

from sapiens2.datasets.synthhumans import (
    ensure_synthhumans,
    generate_synthhumans,
    render_image,
    render_scene,
    scene_for,
)
from sapiens2.datasets.synthhumans import generate as generate_module
from sapiens2.datasets.synthhumans.manifest import CONFIG_KEYS, configuration
from sapiens2.datasets.synthhumans.writer import FOLDERS

TINY = dict(num_train=2, num_val=1, size=(32, 24))
RGB_FILES = ['train/rgb/000000.png', 'train/rgb/000001.png', 'val/rgb/000000.png']


def _tree(root):
    return sorted(osp.relpath(osp.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def _manifest(root):
    with open(osp.join(root, 'manifest.json')) as f:
        return json.load(f)


def test_render_image_equals_the_image_of_the_full_rendering():
    for index in range(3):
        scene = scene_for(3, 'train', index, (64, 48))
        np.testing.assert_array_equal(render_image(scene), render_scene(scene).image)


def test_rgb_only_set_holds_only_images_identical_to_a_full_set(tmp_path):
    rgb = generate_synthhumans(str(tmp_path / 'rgb'), rgb_only=True, **TINY)
    full = generate_synthhumans(str(tmp_path / 'full'), **TINY)
    manifest = _manifest(rgb)
    assert _tree(rgb) == sorted(RGB_FILES + ['manifest.json'])
    assert sorted(manifest['files']) == RGB_FILES and manifest['rgb_only'] is True
    assert _manifest(full)['rgb_only'] is False
    for rel in RGB_FILES:
        assert filecmp.cmp(osp.join(rgb, rel), osp.join(full, rel), shallow=False), rel


def test_switching_modes_replaces_only_the_sets_own_files(tmp_path, monkeypatch):
    root = str(tmp_path / 'synth')
    ensure_synthhumans(root, **TINY)
    mine = osp.join(root, 'train', 'seg', 'my_labels.png')
    with open(mine, 'w') as f:
        f.write('mine')
    ensure_synthhumans(root, rgb_only=True, **TINY)
    assert _tree(root) == sorted(RGB_FILES + ['manifest.json', 'train/seg/my_labels.png'])
    calls = []
    monkeypatch.setattr(generate_module, 'render_image', lambda scene, background=None: calls.append(scene))
    ensure_synthhumans(root, rgb_only=True, **TINY)  # same configuration: reused, nothing rendered
    assert not calls
    monkeypatch.undo()
    ensure_synthhumans(root, **TINY)
    # 3 samples, per split a keypoint annotation and a scene-property file
    assert len(_manifest(root)['files']) == 3 * len(FOLDERS) + 4 and osp.isfile(mine)
    with open(mine) as f:
        assert f.read() == 'mine'


def test_manifests_written_before_rgb_only_mean_full_sets():
    old = dict(renderer_version=4, num_train=2, num_val=1, size=[32, 24], seed=0, files=[])
    assert 'rgb_only' in CONFIG_KEYS and configuration(old)['rgb_only'] is False
