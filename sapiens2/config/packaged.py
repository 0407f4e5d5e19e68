"""The configs shipped inside the package (``sapiens2/.mim/configs``), by their ``sapiens2::`` names.

In a checkout they are links to ``configs/`` and ``projects/<name>/configs``; in a wheel, copies. A user config
anywhere can inherit one: ``_base_ = ['sapiens2::pose/sapiens2_1b_pose_goliath-1024x768.py']``.
"""
import os
import os.path as osp
from importlib import resources
from typing import List

PREFIX = 'sapiens2::'


def config_dir() -> str:
    """The folder holding the packaged configs (``pose/``, ``seg/``, ``normal/``, ..., ``_base_/``)."""
    path = osp.join(str(resources.files('sapiens2')), '.mim', 'configs')
    if not osp.isdir(path):
        raise FileNotFoundError(f'The packaged configs are missing ({path}); reinstall sapiens2 '
                                '(pip install -e . in a checkout).')
    return path


def config_path(name: str) -> str:
    """The file of a packaged config: ``'pose/x.py'`` or ``'sapiens2::pose/x.py'``; an existing path is returned
    as it is."""
    if osp.isfile(name) and not name.startswith(PREFIX):
        return name
    relative = name[len(PREFIX):] if name.startswith(PREFIX) else name
    path = osp.join(config_dir(), relative)
    if not osp.isfile(path):
        raise FileNotFoundError(f'No packaged config {PREFIX}{relative} (looked in {config_dir()}); '
                                '`sapiens2 configs` lists them.')
    return path


def list_configs() -> List[str]:
    """Every packaged config as ``<folder>/<file>.py`` (bases under ``_base_`` excluded), sorted."""
    root = config_dir()
    found = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = [d for d in dirs if d != '_base_']
        found += [osp.relpath(osp.join(folder, f), root) for f in files if f.endswith('.py')]
    return sorted(p for p in found if not p.startswith('_base_'))
