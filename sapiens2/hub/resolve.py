"""Registers Hub references (``hf://...``) and model aliases (``pose-1b``) as checkpoint names.

Importing this module registers both as schemes of the checkpoint loader
(:func:`sapiens2.engine.checkpoint.register_checkpoint_scheme`; the names are resolved by :mod:`sapiens2.hub.locate`),
and the check of a Hub snapshot's ``config.json`` as a fit check
(:func:`~sapiens2.engine.checkpoint.register_checkpoint_check`); ``import sapiens2`` does, so every place that takes a
checkpoint accepts them. An existing local file always wins. The aliases are also model names where a config goes
(:mod:`sapiens2.config.model_names`: mmpose's and mmseg's ``init_model`` and Inferencers, through the adaptations).
"""
from typing import Optional, Tuple

from sapiens2.config.model_names import register_model_name_resolver
from sapiens2.engine.checkpoint import register_checkpoint_check, register_checkpoint_scheme

from .config_check import check_model_fits_hub_config
from .locate import DEFAULT_FILENAMES, resolve_alias, resolve_hub_uri
from .model_zoo import get_entry, resolve_model
from .reference import HF_PREFIX


def alias_config(name: str, checkpoint: Optional[str] = None) -> Optional[Tuple[str, Optional[str]]]:
    """The packaged config of a model alias and, unless ``checkpoint`` is given, the alias as its checkpoint (None
    for a name that is no alias)."""
    return resolve_model(name, checkpoint) if get_entry(name) is not None else None


register_checkpoint_scheme(HF_PREFIX, resolve_hub_uri)
register_checkpoint_scheme('', resolve_alias)
register_checkpoint_check(check_model_fits_hub_config)
register_model_name_resolver(alias_config)

__all__ = ['DEFAULT_FILENAMES', 'alias_config', 'resolve_alias', 'resolve_hub_uri']
