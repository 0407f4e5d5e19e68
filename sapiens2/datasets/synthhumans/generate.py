"""Generate a SynthHumans dataset folder, or reuse the one already there (safe with concurrent processes)."""
import contextlib
import fcntl
import hashlib
import json
import os
import os.path as osp
import shutil
import tempfile
from typing import Optional, Tuple

import numpy as np

from .render import render_scene
from .scene import Scene, sample_scene
from .writer import coco_records, make_split_dirs, write_annotations, write_sample

# Bump whenever the rendered output changes, so that cached datasets are regenerated.
RENDERER_VERSION = 4
SPLITS = {'train': 0, 'val': 1}
MANIFEST = 'manifest.json'


def scene_for(seed: int, split: str, index: int, size: Tuple[int, int]) -> Scene:
    """The scene of sample ``index`` of ``split``; independent of the split sizes and of other samples."""
    if split not in SPLITS:
        raise ValueError(f'unknown SynthHumans split {split!r}; expected one of {sorted(SPLITS)}')
    return sample_scene(np.random.default_rng([seed, SPLITS[split], index]), size)


def _manifest(num_train: int, num_val: int, size: Tuple[int, int], seed: int) -> dict:
    return dict(renderer_version=RENDERER_VERSION, num_train=int(num_train), num_val=int(num_val),
                size=[int(size[0]), int(size[1])], seed=int(seed))


def _read_manifest(root: str) -> Optional[dict]:
    try:
        with open(osp.join(root, MANIFEST)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def generate_synthhumans(root: str, num_train: int = 256, num_val: int = 64, size: Tuple[int, int] = (256, 192),
                         seed: int = 0, verbose: bool = False) -> str:
    """Render ``num_train`` + ``num_val`` samples of ``size = (H, W)`` into ``root`` and return ``root``.

    The manifest is written last, so a folder with a manifest is complete.
    """
    if len(size) != 2 or min(size) < 16:
        raise ValueError(f'SynthHumans size must be (H, W) with both >= 16, got {size}')
    for split, count in (('train', num_train), ('val', num_val)):
        make_split_dirs(root, split)
        images, annotations = [], []
        for i in range(count):
            name = f'{i:06d}'
            rendering = render_scene(scene_for(seed, split, i, tuple(size)))
            write_sample(root, split, name, rendering)
            image, anns = coco_records(rendering, i, f'{split}/rgb/{name}.png', len(annotations) + 1)
            images.append(image)
            annotations.extend(anns)
            if verbose and (i + 1) % 50 == 0:
                print(f'{split}: {i + 1}/{count}', flush=True)
        write_annotations(root, split, images, annotations)
    with open(osp.join(root, MANIFEST), 'w') as f:
        json.dump(_manifest(num_train, num_val, size, seed), f, indent=1)
    return root


@contextlib.contextmanager
def _file_lock(path: str):
    with open(path, 'a') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_synthhumans(root: str = 'data/synthhumans', num_train: int = 256, num_val: int = 64,
                       size: Tuple[int, int] = (256, 192), seed: int = 0) -> str:
    """Return ``root`` after making sure it holds exactly this SynthHumans configuration.

    Generates into a temporary sibling folder and renames it into place under a file lock, so concurrent callers
    (e.g. several pytest processes) generate once and never see a partial dataset.
    """
    wanted = _manifest(num_train, num_val, size, seed)
    if _read_manifest(root) == wanted:
        return root
    root_abs = osp.abspath(root)
    parent = osp.dirname(root_abs)
    os.makedirs(parent, exist_ok=True)
    lock = osp.join(tempfile.gettempdir(), f'synthhumans-{hashlib.sha1(root_abs.encode()).hexdigest()[:16]}.lock')
    with _file_lock(lock):
        if _read_manifest(root) == wanted:
            return root
        tmp = tempfile.mkdtemp(prefix=osp.basename(root_abs) + '.tmp-', dir=parent)
        try:
            generate_synthhumans(tmp, num_train, num_val, size, seed)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        stale = None
        if osp.exists(root_abs):
            stale = tempfile.mkdtemp(prefix=osp.basename(root_abs) + '.stale-', dir=parent)
            os.rename(root_abs, osp.join(stale, 'old'))
        os.rename(tmp, root_abs)
        if stale:
            shutil.rmtree(stale, ignore_errors=True)
    return root
