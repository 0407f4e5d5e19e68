"""Released checkpoints by name: Hub references ``hf://org/repo[@revision][/<file>]`` and model aliases.

Importing it registers both as schemes of the checkpoint loader, and the check of a Hub checkpoint against its
repository's ``config.json`` as a fit check of the loader (``import sapiens2`` does).
"""
from sapiens2.engine.checkpoint import register_checkpoint_check, register_checkpoint_scheme

from .config_check import check_model_fits_hub_config
from .download import HubAccessError, HubCheckpointNotFoundError, download_checkpoint
from .model_zoo import ModelZooEntry, get_entry, resolve_model
from .reference import HF_PREFIX, HubReference, is_hub_uri, parse_hub_uri
from .resolve import resolve_alias, resolve_hub_uri

register_checkpoint_scheme(HF_PREFIX, resolve_hub_uri)
register_checkpoint_scheme('', resolve_alias)
register_checkpoint_check(check_model_fits_hub_config)

__all__ = [
    'HF_PREFIX', 'HubAccessError', 'HubCheckpointNotFoundError', 'HubReference', 'ModelZooEntry',
    'download_checkpoint', 'get_entry', 'is_hub_uri', 'parse_hub_uri', 'resolve_alias', 'resolve_hub_uri',
    'resolve_model'
]
