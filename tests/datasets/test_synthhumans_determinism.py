"""Determinism, caching and the on-disk layout of SynthHumans."""
import filecmp
import json
import multiprocessing as mp
import os
import os.path as osp

import numpy as np

from sapiens2.datasets.synthhumans import ensure_synthhumans, generate_synthhumans, render_scene, scene_for
from tests.datasets.opencv_threads import one_opencv_thread

SMALL = dict(num_train=3, num_val=2, size=(64, 48))


def _tree(root):
    return sorted(osp.relpath(osp.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_same_seed_is_byte_identical(tmp_path):
    a = generate_synthhumans(str(tmp_path / 'a'), seed=5, **SMALL)
    b = generate_synthhumans(str(tmp_path / 'b'), seed=5, **SMALL)
    assert _tree(a) == _tree(b) and len(_tree(a)) == 5 * 12 + 5  # + 2 keypoint and 2 scene-property files, manifest
    for rel in _tree(a):
        assert filecmp.cmp(osp.join(a, rel), osp.join(b, rel), shallow=False), rel


def test_different_seeds_differ():
    one = render_scene(scene_for(0, 'train', 0, (64, 48)))
    two = render_scene(scene_for(1, 'train', 0, (64, 48)))
    val = render_scene(scene_for(0, 'val', 0, (64, 48)))
    assert not np.array_equal(one.image, two.image)
    assert not np.array_equal(one.image, val.image)


def test_render_is_independent_of_opencv_threads():
    scene = scene_for(2, 'train', 1, (64, 48))
    with one_opencv_thread():
        single = render_scene(scene)
    multi = render_scene(scene)
    assert np.array_equal(single.image, multi.image) and np.array_equal(single.depth, multi.depth)


def test_ensure_reuses_and_regenerates(tmp_path):
    root = str(tmp_path / 'synth')
    ensure_synthhumans(root, seed=0, **SMALL)
    stamp = os.stat(osp.join(root, 'manifest.json')).st_mtime_ns
    ensure_synthhumans(root, seed=0, **SMALL)
    assert os.stat(osp.join(root, 'manifest.json')).st_mtime_ns == stamp
    ensure_synthhumans(root, seed=1, **SMALL)
    with open(osp.join(root, 'manifest.json')) as f:
        assert json.load(f)['seed'] == 1
    assert sorted(os.listdir(tmp_path)) == ['synth']


def _ensure(root):
    ensure_synthhumans(root, seed=0, **SMALL)


def test_ensure_is_safe_concurrently(tmp_path):
    root = str(tmp_path / 'synth')
    ctx = mp.get_context('fork')
    procs = [ctx.Process(target=_ensure, args=(root, )) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert sorted(os.listdir(tmp_path)) == ['synth']
    assert len(os.listdir(osp.join(root, 'train', 'rgb'))) == 3
