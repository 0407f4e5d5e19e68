"""Model names that stand for a config and a checkpoint (``pose-tiny``), for the APIs that take a config file.

:mod:`sapiens2.hub.resolve` registers the model aliases here when ``import sapiens2`` loads it; the adaptations of
mmpose's and mmseg's ``init_model`` and of MMEngine's inferencers (:mod:`sapiens2.adaptations`) ask
:func:`resolve_model_name`, so they need not import the hub.
"""
import os.path as osp
from typing import Callable, List, Optional, Tuple

#: ``(name, checkpoint) -> (config path, checkpoint)`` for the names it knows, else None.
Resolver = Callable[[str, Optional[str]], Optional[Tuple[str, Optional[str]]]]
_RESOLVERS: List[Resolver] = []


def register_model_name_resolver(resolver: Resolver) -> None:
    """Add a resolver (once)."""
    if resolver not in _RESOLVERS:
        _RESOLVERS.append(resolver)


def resolve_model_name(config, checkpoint: Optional[str] = None) -> Tuple[object, Optional[str]]:
    """``(config, checkpoint)`` with a registered model name as ``config`` replaced by its config and, unless
    ``checkpoint`` is given, its checkpoint; a file that exists, a config object or an unknown name unchanged."""
    if not isinstance(config, str) or osp.exists(config):
        return config, checkpoint
    for resolver in _RESOLVERS:
        found = resolver(config, checkpoint)
        if found is not None:
            return found
    return config, checkpoint
