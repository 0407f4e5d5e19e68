"""Adding a URI scheme: to the names :mod:`.schemes` resolves, and to MMEngine's ``CheckpointLoader`` (read by
:mod:`.formats`), kept apart so that resolving a name and reading a file import one way."""
import re
from typing import Callable

from .schemes import _SCHEMES
from .torch_files import MapLocation


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
        from .formats import read_checkpoint_file  # torch: only when a file is read
        return read_checkpoint_file(filename, map_location or 'cpu')

    CheckpointLoader.register_scheme(prefixes=re.escape(prefix), loader=load_from_scheme, force=True)
