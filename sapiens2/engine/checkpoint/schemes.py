"""Where a checkpoint name points: the registered URI schemes (``hf://``...; :mod:`.scheme_registration` adds
them) and downloads of ``http(s)://`` checkpoints into the torch hub cache."""
import os
import os.path as osp
from typing import Callable, Dict, Optional

from mmengine.logging import print_log

#: prefix -> resolver, filled by :func:`~.scheme_registration.register_checkpoint_scheme`.
_SCHEMES: Dict[str, Callable[[str], str]] = {}


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
