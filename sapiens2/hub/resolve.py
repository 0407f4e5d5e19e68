"""Registers Hub references (``hf://...``) and model aliases (``pose-1b``) as checkpoint names.

Importing this module registers both as schemes of the checkpoint loader
(:func:`sapiens2.engine.checkpoint.register_checkpoint_scheme`; the names are resolved by :mod:`sapiens2.hub.locate`),
and the check of a Hub snapshot's ``config.json`` as a fit check
(:func:`~sapiens2.engine.checkpoint.register_checkpoint_check`); ``import sapiens2`` does, so every place that takes a
checkpoint accepts them. An existing local file always wins.
"""
from sapiens2.engine.checkpoint import register_checkpoint_check, register_checkpoint_scheme

from .config_check import check_model_fits_hub_config
from .locate import DEFAULT_FILENAMES, resolve_alias, resolve_hub_uri
from .reference import HF_PREFIX

register_checkpoint_scheme(HF_PREFIX, resolve_hub_uri)
register_checkpoint_scheme('', resolve_alias)
register_checkpoint_check(check_model_fits_hub_config)

__all__ = ['DEFAULT_FILENAMES', 'resolve_alias', 'resolve_hub_uri']
