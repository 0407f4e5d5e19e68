"""Where a checkpoint name points: the registry of URI schemes (``hf://``...), shared with MMEngine's
``CheckpointLoader``, and downloads of ``http(s)://`` checkpoints into the torch hub cache."""
import os
import os.path as osp
import re
from typing import Callable, Dict, Optional

from mmengine.logging import print_log

from .torch_files import MapLocation

_SCHEMES: Dict[str, Callable[[str], str]] = {}


def register_checkpoint_scheme(prefix: str, resolve: Callable[[str], str], force: bool = False) -> None:
    """Make checkpoint names starting with ``prefix`` (e.g. ``'hf://'``) loadable everywhere: ``resolve(name)``
    returns the path of a local file (downloading or locating it), which is then read as any local checkpoint.

    The longest matching prefix wins; ``''`` matches every name that is not an existing file (model aliases), and an
    existing local file always wins over every scheme. A non-empty prefix is also registered with MMEngine's
    ``CheckpointLoader`` (``load_from``, ``init_cfg``, mmpose/mmseg ``init_model``); its local scheme resolves names
    through :func:`resolve_checkpoint_path` (:mod:`sapiens2.adaptations`).
    """
    if prefix in _SCHEMES and not force:
        raise KeyError(f'Checkpoint scheme {prefix!r} is already registered; pass force=True to replace it.')
    _SCHEMES[prefix] = resolve
    if not prefix:
        return
    from mmengine.runner.checkpoint import CheckpointLoader

    def load_from_scheme(filename: str, map_location: MapLocation = None) -> dict:
        from .formats import read_checkpoint_file
        return read_checkpoint_file(filename, map_location or 'cpu')

    CheckpointLoader.register_scheme(prefixes=re.escape(prefix), loader=load_from_scheme, force=True)


def resolve_checkpoint_path(name: str) -> str:
    """The local file of a checkpoint name: an existing file as it is, else the file of the longest registered
    scheme prefix it starts with, else the name itself (with ``~`` expanded)."""
    name = str(name)
    path = osp.expanduser(name)
    if osp.isfile(path):
        return path
    for prefix in sorted(_SCHEMES, key=len, reverse=True):
        if name.startswith(prefix):
            resolved = _SCHEMES[prefix](name)
            if not isinstance(resolved, (str, os.PathLike)):
                raise TypeError(f'The resolver of checkpoint scheme {prefix!r} returned {type(resolved).__name__} '
                                f'for {name}; it must return a local file path.')
            return osp.expanduser(os.fspath(resolved))
    return path


def download_checkpoint(url: str, model_dir: Optional[str] = None, progress: bool = True, check_hash: bool = False,
                        file_name: Optional[str] = None) -> str:
    """Downloads ``url`` into the torch hub cache (``<hub dir>/checkpoints``, as ``torch.hub`` and MMEngine do)
    unless it is there already, and returns the local path; reading it is left to
    :func:`~sapiens2.engine.checkpoint.read_checkpoint_file`."""
    from urllib.parse import urlparse

    import torch
    model_dir = model_dir or osp.join(torch.hub.get_dir(), 'checkpoints')
    os.makedirs(model_dir, exist_ok=True)
    cached = osp.join(model_dir, file_name or osp.basename(urlparse(url).path))
    if not osp.exists(cached):
        match = torch.hub.HASH_REGEX.search(osp.basename(cached)) if check_hash else None
        print_log(f'Downloading {url} to {cached}', logger='current')
        torch.hub.download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    return cached
