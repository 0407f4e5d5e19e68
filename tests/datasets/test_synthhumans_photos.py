"""Real-photo backgrounds of SynthHumans: deterministic crops, exact alpha compositing, labels untouched."""
import json
import os
import sys

import cv2
import numpy as np
import pytest

from sapiens2.datasets.synthhumans import ensure_synthhumans, render_scene, scene_for
from sapiens2.datasets.synthhumans import photos as photos_module
from sapiens2.datasets.synthhumans.background import sensor_noise
from sapiens2.datasets.synthhumans.photos import (
    PhotoBackgroundError,
    load_photos,
    package_photo_paths,
    photo_background,
    photo_paths,
    uses_photo,
)

SIZE = (64, 48)
LABELLED = ('mask', 'instance', 'seg', 'albedo', 'normal', 'depth', 'alpha', 'foreground', 'keypoints', 'bboxes')


def _write_photos(folder, count=3, shape=(90, 120)):
    """Textured stand-in photos (coloured noise over gradients), distinct per index."""
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(7)
    for i in range(count):
        ramp = np.linspace(0, 255, shape[1])[None, :, None] * np.array([1.0, 0.5, 0.2])[(np.arange(3) + i) % 3]
        image = np.clip(ramp + rng.normal(0, 30, shape + (3, )), 0, 255).astype(np.uint8)
        cv2.imwrite(str(folder / f'scene_{i}.png'), image)
    return folder


@pytest.fixture(scope='module')
def photo_folder(tmp_path_factory):
    return _write_photos(tmp_path_factory.mktemp('photos') / 'photos')


def test_photo_background_is_deterministic_varied_and_mirrors(photo_folder):
    photos = load_photos(photo_paths(str(photo_folder)))
    first = photo_background(photos, 11, SIZE)
    assert first.shape == SIZE + (3, ) and first.dtype == np.uint8
    assert np.array_equal(first, photo_background(photos, 11, SIZE))
    assert np.array_equal(photo_background(photos, 11, SIZE, flip=True), first[:, ::-1])
    others = [photo_background(photos, seed, SIZE) for seed in range(12)]
    assert len({o.tobytes() for o in others}) == 12


def test_uses_photo_follows_the_ratio():
    seeds = range(400)
    assert not any(uses_photo(s, 0.0) for s in seeds) and all(uses_photo(s, 1.0) for s in seeds)
    assert 0.4 < np.mean([uses_photo(s, 0.5) for s in seeds]) < 0.6


def test_people_over_a_photo_keep_every_label_and_are_composited_exactly(photo_folder):
    photos = load_photos(photo_paths(str(photo_folder)))
    for index in range(3):
        scene = scene_for(0, 'train', index, SIZE)
        background = photo_background(photos, scene.background_seed, SIZE)
        room, photo = render_scene(scene), render_scene(scene, background)
        for name in LABELLED:  # nothing of the photo reaches a label: no pixel of it becomes a person
            assert np.array_equal(getattr(room, name), getattr(photo, name)), name
        assert np.array_equal(photo.background, background)
        noise = sensor_noise(scene.background_seed, SIZE)
        expected = photo.foreground + (1 - photo.alpha[..., None]) * background.astype(np.float64) + noise
        assert np.array_equal(photo.image, np.clip(np.round(expected), 0, 255).astype(np.uint8))
        assert (photo.alpha == 0).any() and not np.array_equal(photo.image, room.image)


def test_a_background_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match=r'\(64, 48\) BGR uint8'):
        render_scene(scene_for(0, 'train', 0, SIZE), np.zeros((10, 10, 3), np.uint8))


def _files(root):
    return {rel: open(os.path.join(root, rel), 'rb').read() for rel in json.load(open(root / 'manifest.json'))['files']}


def test_a_set_over_photos_is_deterministic_and_its_photos_are_part_of_its_configuration(tmp_path, photo_folder):
    options = dict(num_train=3, num_val=1, size=SIZE, seed=0)
    room = ensure_synthhumans(tmp_path / 'room', **options)
    first = ensure_synthhumans(tmp_path / 'a', photo_ratio=1.0, photo_folder=str(photo_folder), **options)
    again = ensure_synthhumans(tmp_path / 'b', photo_ratio=1.0, photo_folder=str(photo_folder), **options)
    assert _files(first) == _files(again)  # same seed, same photos: the same bytes
    manifest = json.load(open(first / 'manifest.json'))
    assert manifest['photo_ratio'] == 1.0 and len(manifest['photos']) == 64
    assert manifest['photo_files'] == ['scene_0.png', 'scene_1.png', 'scene_2.png']
    photos = load_photos(photo_paths(str(photo_folder)))
    for i in range(3):
        name = f'train/background/{i:06d}.png'
        scene = scene_for(0, 'train', i, SIZE)
        written = cv2.imread(str(first / name))
        assert np.array_equal(written, photo_background(photos, scene.background_seed, SIZE))
        for folder in ('mask', 'instance', 'seg', 'albedo', 'alpha', 'foreground'):
            assert _files(first)[f'train/{folder}/{i:06d}.png'] == _files(room)[f'train/{folder}/{i:06d}.png']
        for folder in ('normal', 'depth'):
            assert np.array_equal(np.load(first / f'train/{folder}/{i:06d}.npy'),
                                  np.load(room / f'train/{folder}/{i:06d}.npy'))
    assert json.load(open(first / 'annotations/keypoints308_train.json')) == \
        json.load(open(room / 'annotations/keypoints308_train.json'))

    # Another photo is another configuration: the set is rendered again, over the new photo.
    before = _files(first)
    cv2.imwrite(str(photo_folder / 'scene_0.png'), np.full((90, 120, 3), 200, np.uint8))
    try:
        ensure_synthhumans(first, photo_ratio=1.0, photo_folder=str(photo_folder), **options)
        assert json.load(open(first / 'manifest.json'))['photos'] != manifest['photos']
        assert _files(first) != before
    finally:
        _write_photos(photo_folder)
    ensure_synthhumans(first, **options)  # no photos: the plain set again
    assert _files(first) == _files(room)


def test_bad_photo_options_say_what_to_do(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match='between 0 and 1'):
        ensure_synthhumans(tmp_path / 'x', 1, 1, SIZE, photo_ratio=1.5)
    with pytest.raises(PhotoBackgroundError, match='does not exist'):
        ensure_synthhumans(tmp_path / 'x', 1, 1, SIZE, photo_ratio=0.5, photo_folder=str(tmp_path / 'missing'))
    (tmp_path / 'empty').mkdir()
    with pytest.raises(PhotoBackgroundError, match='holds no image'):
        ensure_synthhumans(tmp_path / 'x', 1, 1, SIZE, photo_ratio=0.5, photo_folder=str(tmp_path / 'empty'))
    monkeypatch.setattr(photos_module, 'package_folder', lambda package: None)
    with pytest.raises(PhotoBackgroundError, match='pip install scikit-image'):
        ensure_synthhumans(tmp_path / 'x', 1, 1, SIZE, photo_ratio=0.5)
    assert not (tmp_path / 'x').exists()


def test_package_photos_are_found_in_an_installed_package_without_importing_it(tmp_path, monkeypatch):
    package = tmp_path / 'site' / 'skimage'
    (package / 'data').mkdir(parents=True)
    (package / '__init__.py').write_text('raise ImportError("must not be imported")\n')
    _write_photos(package / 'data', count=1)
    os.rename(package / 'data' / 'scene_0.png', package / 'data' / 'brick.png')
    monkeypatch.syspath_prepend(str(tmp_path / 'site'))
    monkeypatch.delitem(sys.modules, 'skimage', raising=False)  # mmdet imports the real one where it is installed
    found = [p for p in package_photo_paths() if p.startswith(str(tmp_path))]
    assert found == [str(package / 'data' / 'brick.png')]
