"""Short model aliases such as ``pose-1b``: a config in the repository and a checkpoint under a local root.

Nothing is downloaded. Checkpoints are looked up under ``$SAPIENS2_CHECKPOINT_ROOT`` (default
``~/.cache/sapiens2/checkpoints``), recursively, by file name: ``sapiens2_<size>_<task>*.safetensors`` (or
``.pth``); for pose, ``sapiens2_<size>_keypoints308*`` matches too. Configs are the packaged ones
(:mod:`sapiens2.config_files`), ``sapiens2::<task>/sapiens2_<size>_<task>_*-1024x768.py``.
"""
import glob
import os
import os.path as osp
import re
from typing import List, Optional, Tuple

from sapiens2.config_files import config_dir

TASKS = ('pose', 'seg', 'normal', 'pointmap', 'albedo', 'matting')
SIZES = ('0.4b', '0.8b', '1b', '5b')
TASK_FILE_NAMES = dict(pose=('pose', 'keypoints308'), seg=('seg', ), normal=('normal', ), pointmap=('pointmap', ),
                       albedo=('albedo', ), matting=('matting', ))
CHECKPOINT_SUFFIXES = ('.safetensors', '.pth', '.bin')
ALIAS_PATTERN = re.compile(r'^(?P<task>[a-z]+)-(?P<size>\d+(?:\.\d+)?b)$')


def checkpoint_root() -> str:
    """``$SAPIENS2_CHECKPOINT_ROOT``, or ``~/.cache/sapiens2/checkpoints``."""
    return osp.expanduser(os.environ.get('SAPIENS2_CHECKPOINT_ROOT', '~/.cache/sapiens2/checkpoints'))


def is_alias(name: str) -> bool:
    """True for names of the form ``<task>-<size>`` that are not existing files."""
    return bool(ALIAS_PATTERN.match(name)) and not osp.exists(name)


def parse_alias(alias: str) -> Tuple[str, str]:
    """``'pose-1b'`` -> ``('pose', '1b')``, with a clear error for unknown tasks or sizes."""
    match = ALIAS_PATTERN.match(alias)
    if not match or match['task'] not in TASKS or match['size'] not in SIZES:
        raise ValueError(f'unknown model alias {alias!r}: use <task>-<size> with task in {TASKS} and size in '
                         f'{SIZES}, e.g. pose-1b, or pass a config file')
    return match['task'], match['size']


def find_config(task: str, size: str) -> str:
    """The packaged config of the full-size ``task`` model of ``size`` (``sapiens2_<size>_<task>_*-1024x768.py``)."""
    pattern = osp.join(config_dir(), task, f'sapiens2_{size}_{task}_*-1024x768.py')
    found = sorted(glob.glob(pattern))
    if not found:
        raise FileNotFoundError(f'no packaged config for {task}-{size} (looked for {pattern}); pass a config path '
                                'instead of the alias')
    return found[0]


def find_checkpoint(task: str, size: str, root: Optional[str] = None) -> str:
    """The checkpoint file of ``task``/``size`` under the checkpoint root (see the module docstring)."""
    root = root or checkpoint_root()
    found: List[str] = []
    for name in TASK_FILE_NAMES[task]:
        for suffix in CHECKPOINT_SUFFIXES:
            found += glob.glob(osp.join(root, '**', f'sapiens2_{size}_{name}*{suffix}'), recursive=True)
    if not found:
        raise FileNotFoundError(
            f'no checkpoint for {task}-{size} under {root}: put the official file (e.g. '
            f'sapiens2_{size}_{task}.safetensors) there, set SAPIENS2_CHECKPOINT_ROOT, or pass --weights PATH')
    return sorted(found, key=lambda p: (CHECKPOINT_SUFFIXES.index(osp.splitext(p)[1]), len(p), p))[0]


def resolve_model(model: str, weights: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """A config path or alias (+ optional weights) -> (config path, checkpoint path or None)."""
    if is_alias(model):
        task, size = parse_alias(model)
        return find_config(task, size), weights or find_checkpoint(task, size)
    if not osp.isfile(model):
        raise FileNotFoundError(f'model {model!r} is neither a config file nor an alias like pose-1b')
    return model, weights
