"""The one checkpoint loader: every checkpoint sapiens2 or MMEngine reads goes through :func:`read_checkpoint_file`.

Its policy (docs/checkpoints.md), one module per concern: what the process trusts (:mod:`.policy`; torch files load
with ``weights_only=True`` unless trusted, :mod:`.torch_files`), the file formats (:mod:`.formats`, written by
:mod:`.writing`), what weights must satisfy to load into a model (strict keys, finite values, floating dtypes:
:mod:`.validation`, applied by :mod:`.loading`), whether a file is complete (:mod:`.integrity`) and ``--resume``
(:mod:`.resume`). Two registries let other code plug in: URI schemes (:func:`register_checkpoint_scheme`, ``hf://``)
and fit checks of a file against a model (:func:`register_checkpoint_check`); :mod:`.averaging` averages
checkpoints of one model. The package imports no model class; its names load on first use (PEP 562), so the tools'
``--help`` reads :data:`TRUST_CHECKPOINT_HELP` without torch.
"""
from sapiens2.utils.lazy_exports import lazy_exports

_EXPORTS = {
    '.errors': ('CheckpointContentError', 'CheckpointMismatchError', 'NonFiniteWeightsError', 'UnsafeCheckpointError',
                'WeightDtypeError'),
    '.policy': ('TRUST_CHECKPOINT_HELP', 'apply_config_checkpoint_policy', 'checkpoint_trusted',
                'set_checkpoint_policy', 'trusted_checkpoints'),
    '.scheme_registration': ('register_checkpoint_scheme', ),
    '.schemes': ('download_checkpoint', 'resolve_checkpoint_path'),
    '.fit_checks': ('check_checkpoint_fit', 'register_checkpoint_check'),
    '.torch_files': ('safe_globals', ),
    '.formats': ('extract_state_dict', 'load_weights', 'read_checkpoint_file', 'serialisable_meta'),
    '.writing': ('check_destination', 'convert_checkpoint', 'save_checkpoint', 'save_weights'),
    '.averaging': ('average_checkpoints', ),
    '.validation': ('adapt_keys', 'compare_keys', 'prepare_state_dict'),
    '.loading': ('load_model_weights', 'read_model_checkpoint', 'strict_load_checkpoint_dict_for_sapiens2',
                 'strict_load_checkpoint_for_sapiens2'),
    '.resume': ('find_resume_checkpoint', ),
}

__getattr__, __dir__ = lazy_exports(__name__, {name: module for module, names in _EXPORTS.items() for name in names})

__all__ = [name for names in _EXPORTS.values() for name in names]
