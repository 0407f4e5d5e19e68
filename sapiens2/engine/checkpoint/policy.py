"""What this process accepts from checkpoint files (trust, non-finite weights) and the words that explain trust.

No torch here: the tools' ``--help`` shows :data:`TRUST_CHECKPOINT_HELP`.
"""
import contextlib
import warnings
from typing import Iterator, Mapping, Optional

TRUST_CHECKPOINT_HELP = ('load torch checkpoints that hold more than weights (weights_only=False, with a warning): '
                         'this runs any code the file contains, so only for files you made or trust')
TRUST_HINT = ('If you made this file or trust where it comes from, load it with trust_checkpoint=True (Python), '
              '--trust-checkpoint (tools/train.py, tools/test.py, tools/convert_checkpoint.py, sapiens2-infer, '
              'tools/deploy/export.py) or `trust_checkpoint = True` in the config: that runs the code the file '
              'contains. Converting it once with `tools/convert_checkpoint.py --trust-checkpoint SRC DST.safetensors` '
              'gives a file that needs no trust.')

_POLICY = dict(trust_checkpoint=False, allow_non_finite_weights=False)
POLICY_KEYS = tuple(_POLICY)


def set_checkpoint_policy(trust_checkpoint: Optional[bool] = None,
                          allow_non_finite_weights: Optional[bool] = None) -> dict:
    """Sets what this process accepts from checkpoint files (None leaves a setting as it is); returns the previous
    settings. ``trust_checkpoint``: torch files needing more than :func:`~sapiens2.engine.checkpoint.safe_globals`
    load with ``weights_only=False`` and a warning (unpickling runs any code they contain).
    ``allow_non_finite_weights``: NaN/Inf weights load with a warning instead of failing."""
    previous = dict(_POLICY)
    for key, value in (('trust_checkpoint', trust_checkpoint), ('allow_non_finite_weights', allow_non_finite_weights)):
        if value is not None:
            _POLICY[key] = bool(value)
    return previous


def checkpoint_trusted() -> bool:
    """Whether this process trusts checkpoint files (:func:`set_checkpoint_policy`)."""
    return _POLICY['trust_checkpoint']


def non_finite_weights_allowed() -> bool:
    """Whether this process loads NaN/Inf weights with a warning (:func:`set_checkpoint_policy`)."""
    return _POLICY['allow_non_finite_weights']


@contextlib.contextmanager
def trusted_checkpoints(trusted: bool = True) -> Iterator[None]:
    """Within the block, checkpoints are trusted (or not), see :func:`set_checkpoint_policy`."""
    previous = set_checkpoint_policy(trust_checkpoint=trusted)
    try:
        yield
    finally:
        set_checkpoint_policy(**previous)


def apply_config_checkpoint_policy(cfg: Mapping) -> None:
    """Applies a config's top-level ``trust_checkpoint`` / ``allow_non_finite_weights`` keys (when present) to the
    process (:func:`set_checkpoint_policy`); called once, when the tools build a runner
    (:func:`sapiens2.engine.launch.build_runner`)."""
    settings = {key: bool(cfg[key]) for key in POLICY_KEYS if cfg.get(key) is not None}
    if settings.get('trust_checkpoint') and not _POLICY['trust_checkpoint']:
        warnings.warn('trust_checkpoint is set: torch checkpoint files that hold more than weights load with '
                      'weights_only=False, which runs any code they contain. Only use files you made or trust.',
                      stacklevel=2)
    set_checkpoint_policy(**settings)
