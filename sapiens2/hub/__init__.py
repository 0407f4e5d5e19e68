"""Released checkpoints by name: Hub references ``hf://org/repo[@revision][/<file>]`` and model aliases.

Both are schemes of the checkpoint loader, and the check of a Hub checkpoint against its repository's
``config.json`` a fit check of the loader, registered by :mod:`sapiens2.hub.resolve` (``import sapiens2`` imports
it). The names load on first use (PEP 562): the model zoo table needs neither torch nor MMEngine.
"""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'HubAccessError': '.download', 'HubCheckpointNotFoundError': '.download', 'download_checkpoint': '.download',
    'ModelZooEntry': '.model_zoo', 'get_entry': '.model_zoo', 'resolve_model': '.model_zoo',
    'HF_PREFIX': '.reference', 'HubReference': '.reference', 'is_hub_uri': '.reference', 'parse_hub_uri': '.reference',
    'resolve_alias': '.resolve', 'resolve_hub_uri': '.resolve'
})

__all__ = [
    'HF_PREFIX', 'HubAccessError', 'HubCheckpointNotFoundError', 'HubReference', 'ModelZooEntry',
    'download_checkpoint', 'get_entry', 'is_hub_uri', 'parse_hub_uri', 'resolve_alias', 'resolve_hub_uri',
    'resolve_model'
]
