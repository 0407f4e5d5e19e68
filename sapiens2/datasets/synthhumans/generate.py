"""Generate a SynthHumans dataset folder, or reuse the one already there (safe with concurrent processes)."""
import contextlib
import fcntl
import hashlib
import os
import os.path as osp
import shutil
import tempfile
from typing import List, Optional, Tuple

import numpy as np

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text

from .manifest import (
    CONFIG_DEFAULTS,
    MANIFEST,
    OMITTED_AT_DEFAULT,
    SynthHumansFolderError,
    configuration,
    install_set,
    owned_files,
    read_manifest,
)
from .photos import background_for, load_photos, photo_paths, photos_digest
from .properties import scene_properties, write_properties
from .render import render_image, render_scene
from .scene import SCENE_VARIETIES, Scene, check_posture_ratio, sample_scene
from .writer import coco_records, make_split_dirs, write_annotations, write_image, write_sample

# Bump whenever the rendered output changes, so that cached datasets are regenerated.
RENDERER_VERSION = 5
SPLITS = {'train': 0, 'val': 1}


def scene_for(seed: int, split: str, index: int, size: Tuple[int, int], scene_variety: str = 'plain',
              patterned_clothes: bool = False, posture_ratio: float = 0.0) -> Scene:
    """The scene of sample ``index`` of ``split``; independent of the split sizes and of other samples. Its people,
    camera and scene properties do not depend on ``scene_variety`` (see :data:`.scene.SCENE_VARIETIES`) or
    ``patterned_clothes``; ``posture_ratio`` changes only the poses of some people."""
    if split not in SPLITS:
        raise ValueError(f'unknown SynthHumans split {split!r}; expected one of {sorted(SPLITS)}')
    return sample_scene(np.random.default_rng([seed, SPLITS[split], index]), size, scene_variety, patterned_clothes,
                        posture_ratio)


def _photo_paths(photo_ratio: float, photo_folder: Optional[str]) -> Tuple[str, ...]:
    """The background photos a set with ``photo_ratio`` uses (none when it is 0)."""
    if not 0.0 <= photo_ratio <= 1.0:
        raise ValueError(f'photo_ratio (--photo-ratio) is the share of images over a real photo, between 0 and 1; got '
                         f'{photo_ratio}')
    return photo_paths(photo_folder) if photo_ratio > 0 else ()


def _configuration(num_train: int, num_val: int, size: Tuple[int, int], seed: int, rgb_only: bool,
                   photo_ratio: float = 0.0, photos: Tuple[str, ...] = (), scene_variety: str = 'plain',
                   patterned_clothes: bool = False, posture_ratio: float = 0.0) -> dict:
    if scene_variety not in SCENE_VARIETIES:
        raise ValueError(f'scene_variety (--scene-variety) must be one of {SCENE_VARIETIES}, got {scene_variety!r}')
    check_posture_ratio(posture_ratio)
    return dict(renderer_version=RENDERER_VERSION, num_train=int(num_train), num_val=int(num_val),
                size=[int(size[0]), int(size[1])], seed=int(seed), rgb_only=bool(rgb_only),
                photo_ratio=float(photo_ratio), photos=photos_digest(photos) if photos else None,
                scene_variety=scene_variety, patterned_clothes=bool(patterned_clothes),
                posture_ratio=float(posture_ratio))


def generate_synthhumans(root: str, num_train: int = 256, num_val: int = 64, size: Tuple[int, int] = (256, 192),
                         seed: int = 0, verbose: bool = False, rgb_only: bool = False, photo_ratio: float = 0.0,
                         photo_folder: Optional[str] = None, scene_variety: str = 'plain',
                         patterned_clothes: bool = False, posture_ratio: float = 0.0) -> str:
    """Render ``num_train`` + ``num_val`` samples of ``size = (H, W)`` into the new or empty folder ``root``; return it.

    The manifest lists every file written and is written last, so a folder with a manifest is complete. To reuse or
    replace a set in a folder that is not empty, use :func:`ensure_synthhumans`. ``rgb_only`` writes only
    ``<split>/rgb/<name>.png`` (the same pixels as a full set), no maps and no annotations: unlabeled images for
    pretraining, about a tenth of the disk space. A full set also holds the scene properties of every image
    (``annotations/scene_properties_<split>.json``, see :mod:`.properties`).

    ``photo_ratio`` of the images (drawn per image from its background seed) show the people over a real photograph
    instead of a rendered room (:mod:`.photos`): the package photos without people, or those of ``photo_folder``.
    Every other map of an image is the same as over its room.

    ``scene_variety='rich'`` renders textured rooms in several colours with distractor objects, and coloured light
    that varies over the image, instead of one colour per wall and floor under white light (no colour shortcut for
    self-supervised learning, docs/synthhumans.md); the people, their labels and the scene properties stay the same.
    ``patterned_clothes`` prints patterns and folds on the garments (:mod:`.clothes`); the albedo carries the prints.
    ``posture_ratio`` of the people sit, crouch or bend forward instead of standing (:data:`.mannequin.POSTURES`).
    """
    if len(size) != 2 or min(size) < 16:
        raise ValueError(f'SynthHumans size must be (H, W) with both >= 16, got {size}')
    config = _configuration(num_train, num_val, size, seed, rgb_only, photo_ratio, (), scene_variety,
                            patterned_clothes, posture_ratio)
    paths = _photo_paths(photo_ratio, photo_folder)
    photos = load_photos(paths) if paths else ()
    if osp.isdir(root) and os.listdir(root):
        raise SynthHumansFolderError(f'generate_synthhumans renders into a new or empty folder, but {root} is not '
                                     'empty; use ensure_synthhumans to reuse or replace a set, or another folder.')
    files = []
    for split, count in (('train', num_train), ('val', num_val)):
        make_split_dirs(root, split, rgb_only)
        images, annotations, properties = [], [], []
        for i in range(count):
            name = f'{i:06d}'
            scene = scene_for(seed, split, i, tuple(size), scene_variety, patterned_clothes, posture_ratio)
            background = background_for(scene, photos, photo_ratio)
            if rgb_only:
                files.append(write_image(root, split, name, render_image(scene, background)))
            else:
                rendering = render_scene(scene, background)
                files += write_sample(root, split, name, rendering)
                image, anns = coco_records(rendering, i, f'{split}/rgb/{name}.png', len(annotations) + 1)
                images.append(image)
                annotations.extend(anns)
                properties.append(dict(file_name=image['file_name'], **scene_properties(scene)))
            if verbose and (i + 1) % 50 == 0:
                print(f'{split}: {i + 1}/{count}', flush=True)
        if not rgb_only:
            files.append(write_annotations(root, split, images, annotations))
            files.append(write_properties(root, split, properties))
    manifest = dict(config, photos=photos_digest(paths) if paths else None,
                    photo_files=[osp.basename(p) for p in paths], files=[osp.relpath(f, root) for f in files])
    for key in OMITTED_AT_DEFAULT:
        if manifest[key] == CONFIG_DEFAULTS[key]:
            del manifest[key]
    atomic_write_text(osp.join(root, MANIFEST), strict_json.dumps(manifest, indent=1))
    return root


@contextlib.contextmanager
def _file_lock(path: str):
    with open(path, 'a') as f:  # direct write: a lock file, never written to
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _files_to_replace(root: str, wanted: dict, overwrite: bool) -> Optional[List[str]]:
    """None when ``root`` already holds the wanted set; else the files of ``root`` that a new set replaces.

    Raises :class:`SynthHumansFolderError` when the set cannot be generated without touching other files.
    """
    if not osp.lexists(root):
        return []
    if not osp.isdir(root):
        raise SynthHumansFolderError(f'{root} exists and is not a folder; choose another folder for SynthHumans.')
    manifest = read_manifest(root)
    if manifest is None:
        if os.listdir(root) and not overwrite:
            raise SynthHumansFolderError(
                f'{root} is not empty and is not a SynthHumans set (it has no {MANIFEST}); refusing to write into '
                'it. Choose another (new or empty) folder, or pass overwrite=True (--overwrite for '
                'tools/dataset_converters/make_synthhumans.py) to add the set next to its files, none of which is '
                'deleted or overwritten.')
        return []
    if not overwrite and configuration(manifest) == wanted:
        return None
    return owned_files(root, manifest)


def ensure_synthhumans(root: str = 'data/synthhumans', num_train: int = 256, num_val: int = 64,
                       size: Tuple[int, int] = (256, 192), seed: int = 0, overwrite: bool = False,
                       verbose: bool = False, rgb_only: bool = False, photo_ratio: float = 0.0,
                       photo_folder: Optional[str] = None, scene_variety: str = 'plain',
                       patterned_clothes: bool = False, posture_ratio: float = 0.0) -> str:
    """Return ``root`` after making sure it holds exactly this SynthHumans configuration.

    A new or empty folder is generated into. A SynthHumans set with this configuration (renderer version, counts,
    size, seed, ``rgb_only``: images only, ``photo_ratio`` and the bytes of the background photos,
    ``scene_variety``, ``patterned_clothes``, ``posture_ratio``, see :func:`generate_synthhumans`) is reused unless
    ``overwrite``. A set with another configuration, or any set with ``overwrite``, is replaced: only the files its
    manifest lists are removed (then the folders this left empty), nothing else. A folder that is not empty and holds
    no set is refused, unless ``overwrite``: the set is then added next to its files. A new file never lands on a
    file that is not the old set's (:class:`SynthHumansFolderError`).

    The set is rendered into a temporary sibling folder and moved into place under a file lock, manifest last, so
    concurrent callers (e.g. several pytest processes) generate once and never see a partial dataset.
    """
    wanted = _configuration(num_train, num_val, size, seed, rgb_only, photo_ratio,
                            _photo_paths(photo_ratio, photo_folder), scene_variety, patterned_clothes,
                            posture_ratio)
    if osp.isdir(root) and not overwrite:
        manifest = read_manifest(root)
        if manifest is not None and configuration(manifest) == wanted:
            return root
    root_abs = osp.realpath(root)
    parent = osp.dirname(root_abs)
    os.makedirs(parent, exist_ok=True)
    lock = osp.join(tempfile.gettempdir(), f'synthhumans-{hashlib.sha1(root_abs.encode()).hexdigest()[:16]}.lock')
    with _file_lock(lock):
        replaced = _files_to_replace(root, wanted, overwrite)
        if replaced is None:
            return root
        tmp = tempfile.mkdtemp(prefix=osp.basename(root_abs) + '.tmp-', dir=parent)
        try:
            generate_synthhumans(tmp, num_train, num_val, size, seed, verbose=verbose, rgb_only=rgb_only,
                                 photo_ratio=photo_ratio, photo_folder=photo_folder, scene_variety=scene_variety,
                                 patterned_clothes=patterned_clothes, posture_ratio=posture_ratio)
            if osp.lexists(root_abs):
                install_set(tmp, root, replaced)
            else:
                os.rename(tmp, root_abs)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return root
