"""The one checkpoint loader: every checkpoint sapiens2 or MMEngine reads goes through :func:`read_checkpoint_file`.

Formats: official ``.safetensors`` files (bare pretrain keys or ``backbone.``/``decode_head.`` task keys, with an
optional JSON ``meta``) and torch files (MMEngine training checkpoints, ``{'state_dict'|'model'|'teacher': ...}``
wrappers or bare state dicts). The policy (docs/checkpoints.md):

* **safe**: torch files load with ``weights_only=True``; only tensors, containers and what MMEngine's own training
  checkpoints hold (:func:`safe_globals`) are allowed. Anything else raises :class:`UnsafeCheckpointError` unless
  the checkpoint is trusted (``trust_checkpoint=True``, :func:`trusted_checkpoints`, ``--trust-checkpoint``,
  ``trust_checkpoint = True`` in a config; :func:`set_checkpoint_policy`), which loads it with
  ``weights_only=False`` and a warning;
* **strict**: :func:`load_model_weights` raises :class:`CheckpointMismatchError` on any missing, unexpected or
  shape-mismatched key unless ``strict=False``;
* **finite**: NaN/Inf weights raise :class:`NonFiniteWeightsError` naming the tensors unless
  ``allow_non_finite_weights=True`` (argument, ``init_cfg`` key or config key);
* **floating**: an integer or bool tensor for a floating-point weight of the model raises :class:`WeightDtypeError`
  naming it (``load_state_dict`` would cast its values as they are: a weight stored as the integer 27 becomes 27.0);
* **schemes**: :func:`register_checkpoint_scheme` maps a URI prefix (``hf://``...) to a function returning a local
  file, for this loader and MMEngine's ``CheckpointLoader`` alike;
* **fit checks**: :func:`register_checkpoint_check` adds a check of a checkpoint file against the model it is about
  to be loaded into (``sapiens2.hub`` checks a Hub snapshot's ``config.json``). This module works on files, state
  dicts and metadata only and imports no model class.
"""
import contextlib
import difflib
import json
import logging
import os
import os.path as osp
import pickle
import re
import warnings
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from mmengine.logging import MMLogger, print_log
from torch import nn

from .atomic_save import AtomicOutput
from .checkpoint_integrity import file_format, incomplete_reason, newest_complete_checkpoint
from .dtype_labels import check_half_precision_labels
from .trust import TRUST_CHECKPOINT_HELP  # noqa: F401  (re-exported for the tools)

StateDict = Dict[str, torch.Tensor]
MapLocation = Union[str, torch.device, Callable, None]
_MAX_LISTED_KEYS = 20
_MAX_LISTED_NON_FINITE = 10
SAFETENSORS_META_KEY = 'meta'
#: Suffixes of the checkpoint files :func:`save_weights` writes: safetensors, or a torch file.
WRITABLE_SUFFIXES = ('.safetensors', '.pth', '.pt')
TRUST_HINT = ('If you made this file or trust where it comes from, load it with trust_checkpoint=True (Python), '
              '--trust-checkpoint (tools/train.py, tools/test.py, tools/convert_checkpoint.py, sapiens2-infer, '
              'tools/deploy/export.py) or `trust_checkpoint = True` in the config: that runs the code the file '
              'contains. Converting it once with `tools/convert_checkpoint.py --trust-checkpoint SRC DST.safetensors` '
              'gives a file that needs no trust.')



class CheckpointMismatchError(RuntimeError):
    """The checkpoint's keys or shapes do not match the model."""


class UnsafeCheckpointError(RuntimeError):
    """A torch checkpoint holds Python objects whose unpickling could run code, and it is not trusted."""


class CheckpointContentError(ValueError):
    """A checkpoint file is readable but holds something other than a checkpoint (a list, a string, a module...)."""


class NonFiniteWeightsError(ValueError):
    """Weights about to be loaded into a model hold NaN or Inf values."""


class WeightDtypeError(ValueError):
    """A checkpoint holds integer or bool tensors where the model has floating-point weights."""


# ------------------------------------------------------------------------------------------------- safe loading
def _numpy_globals() -> List[Union[Callable, Tuple[Callable, str]]]:
    from numpy import dtypes
    from numpy._core import multiarray
    dtype_classes = [getattr(dtypes, name) for name in dir(dtypes) if name.endswith('DType')]
    return [
        multiarray._reconstruct, multiarray.scalar, np.ndarray, np.dtype, *dtype_classes,
        # the module paths numpy 1.x wrote into checkpoints
        (multiarray._reconstruct, 'numpy.core.multiarray._reconstruct'),
        (multiarray.scalar, 'numpy.core.multiarray.scalar'),
    ]


def safe_globals() -> List[Union[Callable, Tuple[Callable, str]]]:
    """What ``weights_only=True`` loading allows beyond torch's defaults: exactly what MMEngine's own training
    checkpoints hold (numpy arrays, dtypes and scalars in ``meta`` and the message hub; the message hub's
    ``HistoryBuffer``, pickled without its statistics methods by a sapiens2 adaptation)."""
    from mmengine.logging import HistoryBuffer
    return [*_numpy_globals(), HistoryBuffer]


_POLICY = dict(trust_checkpoint=False, allow_non_finite_weights=False)
POLICY_KEYS = tuple(_POLICY)


def set_checkpoint_policy(trust_checkpoint: Optional[bool] = None,
                          allow_non_finite_weights: Optional[bool] = None) -> dict:
    """Sets what this process accepts from checkpoint files (None leaves a setting as it is); returns the previous
    settings. ``trust_checkpoint``: torch files needing more than :func:`safe_globals` load with
    ``weights_only=False`` and a warning (unpickling runs any code they contain). ``allow_non_finite_weights``:
    NaN/Inf weights load with a warning instead of failing."""
    previous = dict(_POLICY)
    for key, value in (('trust_checkpoint', trust_checkpoint), ('allow_non_finite_weights', allow_non_finite_weights)):
        if value is not None:
            _POLICY[key] = bool(value)
    return previous


def checkpoint_trusted() -> bool:
    """Whether this process trusts checkpoint files (:func:`set_checkpoint_policy`)."""
    return _POLICY['trust_checkpoint']


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
    process (:func:`set_checkpoint_policy`); called when the tools build a runner."""
    settings = {key: bool(cfg[key]) for key in POLICY_KEYS if cfg.get(key) is not None}
    if settings.get('trust_checkpoint') and not _POLICY['trust_checkpoint']:
        warnings.warn('trust_checkpoint is set: torch checkpoint files that hold more than weights load with '
                      'weights_only=False, which runs any code they contain. Only use files you made or trust.',
                      stacklevel=2)
    set_checkpoint_policy(**settings)


def _unsafe_globals(path: str) -> List[str]:
    try:
        return sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    except Exception:  # legacy (non-zip) or unreadable files: the caller reports torch's own error
        return []


def _describe_unsafe(path: str, unsafe: List[str], err: Exception) -> str:
    found = (f'pickle globals {", ".join(unsafe)}' if unsafe else
             f'objects torch\'s weights_only loader refuses (or the file is corrupt; torch: {err})')
    hint = (' (builtins.getattr usually comes from the message hub of a checkpoint saved by MMEngine without '
            'sapiens2, which pickles HistoryBuffer methods)') if 'builtins.getattr' in unsafe else ''
    return (f'{path} is not loaded: it holds {found}{hint}, and unpickling those can run arbitrary code. sapiens2 '
            f'loads torch files with weights_only=True, allowing tensors, containers, numpy values and MMEngine\'s '
            f'HistoryBuffer only. {TRUST_HINT}')


def _torch_load(path: str, map_location: MapLocation, trusted: bool) -> Any:
    allowed = [g for g in safe_globals() if g not in torch.serialization.get_safe_globals()]
    try:
        with torch.serialization.safe_globals(allowed):
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:
        with torch.serialization.safe_globals(allowed):
            unsafe = _unsafe_globals(path)
        if not trusted:
            raise UnsafeCheckpointError(_describe_unsafe(path, unsafe, err)) from None
        warnings.warn(f'Loading {path} with weights_only=False because it is trusted: it holds '
                      f'{", ".join(unsafe) or "objects weights_only refuses"}, and unpickling runs any code the file '
                      f'contains.', stacklevel=3)
    return torch.load(path, map_location=map_location, weights_only=False)


# ------------------------------------------------------------------------------------------------------ schemes
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


# --------------------------------------------------------------------------------------------------- fit checks
_FIT_CHECKS: List[Callable[..., None]] = []


def register_checkpoint_check(check: Callable[..., None]) -> None:
    """Make ``check(model, checkpoint_file, compare_labels=...)`` run before any checkpoint file is loaded into a model
    (:func:`load_model_weights`, :func:`read_model_checkpoint`, the runner's ``load_from``); it raises to refuse the
    file and ignores models it knows nothing about. Registering the same function again does nothing."""
    if check not in _FIT_CHECKS:
        _FIT_CHECKS.append(check)


def check_checkpoint_fit(model: nn.Module, checkpoint_file: str, compare_labels: bool = True) -> None:
    """Run the registered fit checks of ``model`` against the local ``checkpoint_file``; the number of labels is
    compared only with ``compare_labels`` (not when fine-tuning to another layout)."""
    for check in _FIT_CHECKS:
        check(model, checkpoint_file, compare_labels=compare_labels)


# ------------------------------------------------------------------------------------------------------ reading
def _meta_to_json(meta: Mapping) -> str:
    def encode(value):
        if isinstance(value, np.ndarray):
            return {'__ndarray__': value.tolist(), 'dtype': str(value.dtype)}
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, torch.Tensor):
            return {'__ndarray__': value.tolist(), 'dtype': str(value.numpy(force=True).dtype)}
        raise TypeError(f'{type(value).__name__} is not JSON serialisable')

    return json.dumps(dict(meta), default=encode)


def _meta_from_json(text: str) -> dict:
    def decode(obj: dict):
        return np.array(obj['__ndarray__'], dtype=obj['dtype']) if set(obj) == {'__ndarray__', 'dtype'} else obj

    return json.loads(text, object_hook=decode)


def serialisable_meta(meta: Optional[Mapping]) -> dict:
    """The entries of a checkpoint ``meta`` that a ``.safetensors`` file can carry (JSON, numpy arrays tagged);
    entries that cannot be encoded are dropped with a warning naming them."""
    kept, dropped = {}, []
    for key, value in (meta or {}).items():
        try:
            _meta_to_json({key: value})
        except (TypeError, ValueError):
            dropped.append(str(key))
        else:
            kept[key] = value
    if dropped:
        warnings.warn(f'checkpoint meta entries {dropped} cannot be stored as JSON and are left out.', stacklevel=2)
    return kept


def _read_safetensors(path: str) -> dict:
    from safetensors import SafetensorError, safe_open
    from safetensors.torch import load_file
    try:
        state_dict = load_file(path)
        with safe_open(path, framework='pt') as f:
            metadata = f.metadata() or {}
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(f'{path} is not a readable .safetensors file ({err}); the file may be truncated or '
                         f'corrupt: download or export it again.') from err
    check_half_precision_labels(state_dict, path)
    meta = {}
    if SAFETENSORS_META_KEY in metadata:
        try:
            meta = _meta_from_json(metadata[SAFETENSORS_META_KEY])
        except (ValueError, TypeError) as err:
            raise ValueError(f'{path}: the {SAFETENSORS_META_KEY!r} metadata is not valid JSON ({err}); rewrite it '
                             f'with sapiens2.engine.save_weights.') from err
    return {'state_dict': state_dict, 'meta': meta}


def _folder_given(path: str) -> str:
    """The message for a folder given as a checkpoint: its newest checkpoint file, if it holds one."""
    files = [osp.join(path, name) for name in os.listdir(path) if name.endswith(('.pth', '.pt', '.safetensors'))]
    newest = f' (its newest: {max(files, key=osp.getmtime)})' if files else ' (it holds none)'
    return (f'{path} is a folder, not a checkpoint file: pass one of its checkpoint files{newest} (tools/train.py '
            '--resume without a path resumes from the work dir\'s latest checkpoint).')


def _describe(obj: Any) -> str:
    if isinstance(obj, torch.Tensor):
        return f'a single tensor of shape {tuple(obj.shape)}'
    if isinstance(obj, (list, tuple)):
        return f'a {type(obj).__name__} of {len(obj)} items'
    if isinstance(obj, str):
        return f'a string ({obj[:40]!r})'
    if isinstance(obj, nn.Module):
        return f'a whole {type(obj).__name__} module object'
    return f'a {type(obj).__module__}.{type(obj).__name__}'


def read_checkpoint_file(path: str,
                         map_location: MapLocation = 'cpu',
                         trust_checkpoint: Optional[bool] = None) -> dict:
    """Reads a checkpoint file (or registered URI) as a dict.

    ``.safetensors`` -> ``{'state_dict': tensors, 'meta': dict}`` (``meta`` from the file's JSON metadata, empty
    when absent); anything else -> ``torch.load`` with ``weights_only=True`` and :func:`safe_globals`, unless
    ``trust_checkpoint`` (default: the process setting, :func:`set_checkpoint_policy`).
    """
    path = resolve_checkpoint_path(path)
    if osp.isdir(path):
        raise IsADirectoryError(_folder_given(path))
    if not osp.isfile(path):
        raise FileNotFoundError(f'Checkpoint {path} does not exist; pass a local .safetensors or .pth file, a Hub '
                                f'reference hf://org/repo[@revision][/<file>], or a model alias (`sapiens2 models` '
                                f'lists them).')
    if path.endswith('.safetensors'):
        return _read_safetensors(path)
    found = file_format(path)
    if found == 'safetensors':
        warnings.warn(f'{path} is a .safetensors file under another suffix; it is loaded as one (safely, no pickle). '
                      'Rename it to .safetensors.', stacklevel=2)
        return _read_safetensors(path)
    if found is None:
        raise ValueError(f'{path} is not a checkpoint: neither a torch file (zip archive or pickle) nor a .safetensors '
                         'file; pass a checkpoint saved by training, tools/convert_checkpoint.py or torch.save.')
    trusted = _POLICY['trust_checkpoint'] if trust_checkpoint is None else bool(trust_checkpoint)
    try:
        checkpoint = _torch_load(path, map_location, trusted)
    except UnsafeCheckpointError:
        raise
    except Exception as err:  # torch raises many types for truncated/corrupt files
        raise ValueError(f'{path} could not be read as a torch checkpoint ({type(err).__name__}: {err}); '
                         f'the file may be truncated or corrupt.') from err
    if not isinstance(checkpoint, Mapping):
        raise CheckpointContentError(
            f'{path} holds {_describe(checkpoint)}, not a checkpoint: expected a dict of tensors (a state dict, '
            f"torch.save(model.state_dict(), ...)) or an MMEngine checkpoint {{'state_dict': ..., 'meta': ...}}.")
    return checkpoint


def extract_state_dict(checkpoint: Mapping, source: str = 'the checkpoint') -> StateDict:
    """Unwraps ``state_dict``, then ``model``, then ``teacher`` (stripping its ``backbone.`` prefix)."""
    if not isinstance(checkpoint, Mapping):
        raise CheckpointContentError(f'{source} is {_describe(checkpoint)}; expected a dict of tensors.')
    for key in ('state_dict', 'model'):
        if key in checkpoint and isinstance(checkpoint[key], Mapping):
            checkpoint = checkpoint[key]
            break
    else:
        if 'teacher' in checkpoint and isinstance(checkpoint['teacher'], Mapping):
            checkpoint = OrderedDict((re.sub(r'^backbone\.', '', k), v) for k, v in checkpoint['teacher'].items())
    bad = [k for k, v in checkpoint.items() if not isinstance(v, torch.Tensor)]
    if bad:
        raise CheckpointContentError(f'{source} holds non-tensor entries {bad[:5]}; expected a state dict of tensors '
                                     f"(or an MMEngine checkpoint with one under 'state_dict').")
    return OrderedDict(checkpoint)


def read_model_checkpoint(model: nn.Module, checkpoint: str, map_location: MapLocation = 'cpu',
                          trust_checkpoint: Optional[bool] = None) -> dict:
    """The checkpoint dict (weights and ``meta``, e.g. ``dataset_meta``) of a file or registered URI that is about to
    be loaded into ``model``, after the registered fit checks (:func:`register_checkpoint_check`)."""
    path = resolve_checkpoint_path(checkpoint)
    check_checkpoint_fit(model, path)
    return read_checkpoint_file(path, map_location, trust_checkpoint)


def load_weights(path: str, map_location: MapLocation = 'cpu',
                 trust_checkpoint: Optional[bool] = None) -> StateDict:
    """Reads the state dict of any supported checkpoint file."""
    return extract_state_dict(read_checkpoint_file(path, map_location, trust_checkpoint), str(path))


# ------------------------------------------------------------------------------------------------------ writing
def check_checkpoint_suffix(path: str) -> None:
    """Raise a ValueError (one line, suggesting the nearest suffix) unless ``path`` ends with one of
    :data:`WRITABLE_SUFFIXES`, the suffixes that say which format :func:`save_weights` writes."""
    suffix = osp.splitext(path)[1]
    if suffix not in WRITABLE_SUFFIXES:
        close = difflib.get_close_matches(suffix.lower(), WRITABLE_SUFFIXES, n=1, cutoff=0.6)
        hint = f'; did you mean {osp.splitext(path)[0] + close[0]}?' if close else ''
        raise ValueError(f'{path}: the suffix {suffix or "(none)"} does not say a checkpoint format; use .safetensors, '
                         f'or .pth or .pt for a torch file{hint}')


def save_weights(state_dict: Mapping[str, torch.Tensor], path: str, meta: Optional[Mapping] = None) -> None:
    """Writes a state dict atomically: ``.safetensors`` by suffix (``meta`` as JSON metadata), a torch file
    ``{'state_dict': ..., 'meta': ...}`` for ``.pth``/``.pt``; another suffix is a ValueError. ``meta`` is e.g.
    ``{'dataset_meta': model.dataset_meta}``; numpy arrays in it round-trip."""
    path = osp.expanduser(str(path))
    check_checkpoint_suffix(path)
    meta = dict(meta or {})
    with AtomicOutput(osp.abspath(path)) as out:  # never through a link; safetensors' mode 0600 is restored
        tmp = out.tmp
        if path.endswith('.safetensors'):
            from safetensors.torch import save_file
            try:
                metadata = {SAFETENSORS_META_KEY: _meta_to_json(meta)} if meta else None
            except TypeError as err:
                raise TypeError(f'meta for {path} cannot be stored as JSON ({err}); pass only str/number/list/dict/'
                                f'numpy values (sapiens2.engine.checkpoint.serialisable_meta filters it).') from err
            save_file({k: v.detach().contiguous().cpu() for k, v in state_dict.items()}, tmp, metadata=metadata)
        else:
            torch.save({'state_dict': OrderedDict(state_dict), 'meta': meta}, tmp)


# ------------------------------------------------------------------------------------------------ loading into
def adapt_keys(state_dict: StateDict, model: nn.Module, prefix: Optional[str] = None) -> StateDict:
    """Maps checkpoint keys to the model's naming.

    * strips a leading ``module.`` (DDP checkpoints);
    * keeps only keys under ``prefix`` (e.g. ``'backbone.'``), with the prefix removed;
    * renames ``decode_head.`` to ``head.`` when the model has a ``head`` and no ``decode_head`` (mmpose estimators
      loading an official pose checkpoint).
    """
    adapted = OrderedDict((re.sub(r'^module\.', '', k), v) for k, v in state_dict.items())
    if prefix:
        adapted = OrderedDict((k[len(prefix):], v) for k, v in adapted.items() if k.startswith(prefix))
        if not adapted:
            raise CheckpointMismatchError(f'No checkpoint key starts with prefix {prefix!r}.')
    if hasattr(model, 'head') and not hasattr(model, 'decode_head'):
        adapted = OrderedDict((re.sub(r'^decode_head\.', 'head.', k), v) for k, v in adapted.items())
    return adapted


def _listing(title: str, keys: List[str]) -> str:
    shown = ', '.join(keys[:_MAX_LISTED_KEYS])
    more = f' ... and {len(keys) - _MAX_LISTED_KEYS} more' if len(keys) > _MAX_LISTED_KEYS else ''
    return f'\n  {title} ({len(keys)}): {shown}{more}'


def compare_keys(model: nn.Module, state_dict: StateDict) -> Tuple[List[str], List[str], List[str]]:
    """Returns the (missing, unexpected, shape-mismatched) keys of ``state_dict`` against ``model``."""
    return _compare(_expected_shapes(model), state_dict)


def _expected_shapes(model: nn.Module) -> Dict[str, Optional[tuple]]:
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


def check_floating_dtypes(state_dict: StateDict, dtypes: Mapping[str, torch.dtype], source: str) -> None:
    """Raise :class:`WeightDtypeError` naming the tensors of ``state_dict`` that are integer or bool where ``dtypes``
    (the model's key -> dtype) is floating point: loading would cast their values as they are."""
    found = [(k, v.dtype, dtypes[k]) for k, v in state_dict.items()
             if k in dtypes and dtypes[k].is_floating_point and not (v.is_floating_point() or v.is_complex())]
    if not found:
        return
    shown = ', '.join(f'{k} ({str(have).replace("torch.", "")}, model {str(want).replace("torch.", "")})'
                      for k, have, want in found[:_MAX_LISTED_NON_FINITE])
    more = f' ... and {len(found) - _MAX_LISTED_NON_FINITE} more' if len(found) > _MAX_LISTED_NON_FINITE else ''
    raise WeightDtypeError(
        f'{source} holds integer weights in {len(found)} tensor(s) where the model has floating-point ones: '
        f'{shown}{more}. Loading casts the values as they are (a weight stored as the integer 27 becomes 27.0, '
        'not 0.027): the file is quantised or was written wrongly; use a floating-point checkpoint.')


def _compare(expected: Mapping[str, Optional[tuple]],
             state_dict: StateDict) -> Tuple[List[str], List[str], List[str]]:
    missing = [k for k in expected if k not in state_dict]
    unexpected = [k for k in state_dict if k not in expected]
    mismatched = [k for k, v in state_dict.items()
                  if expected.get(k) is not None and tuple(v.shape) != tuple(expected[k])]
    return missing, unexpected, mismatched


def non_finite_tensors(state_dict: StateDict) -> List[Tuple[str, int, int]]:
    """(key, non-finite count, numel) of every floating-point tensor holding NaN or Inf (meta tensors skipped)."""
    found = []
    for key, value in state_dict.items():
        if not (value.is_floating_point() or value.is_complex()) or value.is_meta or value.numel() == 0:
            continue
        finite = torch.isfinite(value if value.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
                                else value.float())
        if not bool(finite.all()):
            found.append((key, int((~finite).sum()), value.numel()))
    return found


def check_finite(state_dict: StateDict, source: str, allow_non_finite_weights: Optional[bool] = None) -> None:
    """Raises :class:`NonFiniteWeightsError` naming up to 10 tensors with NaN/Inf values (or warns, when
    ``allow_non_finite_weights``; default: the process setting, :func:`set_checkpoint_policy`)."""
    found = non_finite_tensors(state_dict)
    if not found:
        return
    if allow_non_finite_weights is None:
        allow_non_finite_weights = _POLICY['allow_non_finite_weights']
    shown = ', '.join(f'{k} ({bad}/{n})' for k, bad, n in found[:_MAX_LISTED_NON_FINITE])
    more = f' ... and {len(found) - _MAX_LISTED_NON_FINITE} more' if len(found) > _MAX_LISTED_NON_FINITE else ''
    message = f'{source} holds NaN/Inf weights in {len(found)} tensor(s) (non-finite/total values): {shown}{more}'
    if allow_non_finite_weights:
        MMLogger.get_current_instance().warning(message + '; loaded anyway (allow_non_finite_weights=True).')
        return
    raise NonFiniteWeightsError(
        message + '.\nA model with these weights gives NaN outputs; the run that saved them probably diverged: use '
        'an earlier checkpoint. To load it anyway, pass allow_non_finite_weights=True (Python, init_cfg) or set '
        '`allow_non_finite_weights = True` in the config.')


#: Key prefixes of the task heads (mmpose ``head.``, mmseg ``decode_head.`` / ``auxiliary_head.``).
HEAD_PREFIXES = ('head.', 'decode_head.', 'auxiliary_head.')


def other_head_layout(state_dict: StateDict, expected: Mapping[str, Optional[tuple]], missing: List[str],
                      unexpected: List[str], mismatched: List[str]) -> bool:
    """Whether the checkpoint differs from the model only in the number of outputs of head layers (another keypoint
    set or other classes): every other key matches, and each mismatched head tensor differs in its first
    dimension only."""
    return bool(mismatched) and not missing and not unexpected and all(
        k.startswith(HEAD_PREFIXES) and expected.get(k) is not None and tuple(state_dict[k].shape)[1:] ==
        tuple(expected[k])[1:] for k in mismatched)


def _head_layout_notice(source: str, state_dict: StateDict, expected: Mapping[str, Optional[tuple]],
                        skipped: List[str]) -> str:
    shapes = ', '.join(f'{k} {tuple(state_dict[k].shape)} -> {tuple(expected[k])}' for k in sorted(skipped))
    prefix = osp.commonprefix(skipped).rsplit('.', 1)[0]
    return (f'Fine-tuning from {source}, whose head has another layout: {prefix}* keeps its initialisation '
            f'({shapes}); the other {len(state_dict) - len(skipped)} tensors (the backbone included) are loaded.')


def prepare_state_dict(state_dict: StateDict,
                       model: nn.Module,
                       expected: Mapping[str, Optional[tuple]],
                       source: str,
                       strict: bool = True,
                       prefix: Optional[str] = None,
                       allow_non_finite_weights: Optional[bool] = None,
                       dtypes: Optional[Mapping[str, torch.dtype]] = None,
                       head_layout_may_differ: bool = False) -> Tuple[StateDict, List[str], List[str]]:
    """Adapts the keys of ``state_dict`` to ``model`` and checks it against the ``expected`` key -> shape (None:
    unknown) mapping and, when given, the model's key -> ``dtypes`` (:func:`check_floating_dtypes`): the policy of
    :func:`load_model_weights`, shared with the FSDP strategy.

    With ``head_layout_may_differ`` (fine-tuning), a checkpoint that differs only in the output channels of head
    layers (:func:`other_head_layout`) loads every other tensor, the head's mismatched ones are left at their
    initialisation (and returned as missing), and one line says so.

    Returns (state dict to load, missing keys, unexpected keys).
    """
    state_dict = adapt_keys(state_dict, model, prefix)
    check_finite(state_dict, source, allow_non_finite_weights)
    if dtypes is not None:
        check_floating_dtypes(state_dict, dtypes, source)
    missing, unexpected, mismatched = _compare(expected, state_dict)
    if head_layout_may_differ and other_head_layout(state_dict, expected, missing, unexpected, mismatched):
        MMLogger.get_current_instance().warning(_head_layout_notice(source, state_dict, expected, mismatched))
        return OrderedDict((k, v) for k, v in state_dict.items() if k not in mismatched), mismatched, []
    if missing or unexpected or mismatched:
        shapes = [f'{k} (checkpoint {tuple(state_dict[k].shape)} vs model {tuple(expected[k])})' for k in mismatched]
        message = (f'Checkpoint {source} does not match {type(model).__name__}:' + _listing('missing', missing) +
                   _listing('unexpected', unexpected) + _listing('shape mismatch', shapes))
        if strict:
            raise CheckpointMismatchError(
                message + '\nCheck the arch/task of the config and the checkpoint, or load partially with '
                'strict=False (init_cfg=dict(..., strict=False) or `load_strict = False` in the config).')
        MMLogger.get_current_instance().warning(message)
        state_dict = OrderedDict((k, v) for k, v in state_dict.items() if k not in unexpected and k not in mismatched)
    return state_dict, missing, unexpected


def load_model_weights(model: nn.Module,
                       checkpoint: Union[str, Mapping[str, torch.Tensor]],
                       strict: bool = True,
                       prefix: Optional[str] = None,
                       map_location: MapLocation = 'cpu',
                       allow_non_finite_weights: Optional[bool] = None,
                       trust_checkpoint: Optional[bool] = None,
                       source: Optional[str] = None,
                       head_layout_may_differ: bool = False) -> Tuple[List[str], List[str]]:
    """Loads a checkpoint file (or registered URI), checkpoint dict or state dict into ``model``.

    A checkpoint file is first checked against the model by the registered fit checks (e.g. the ``config.json`` of
    a Hub snapshot; :func:`register_checkpoint_check`). Strict by default: any missing, unexpected or
    shape-mismatched key raises :class:`CheckpointMismatchError` listing them. With ``strict=False`` the matching
    tensors are loaded, the rest is logged, and
    (missing, unexpected) is returned. Integer tensors for floating-point weights raise :class:`WeightDtypeError`;
    NaN/Inf weights raise :class:`NonFiniteWeightsError` unless
    ``allow_non_finite_weights``; ``trust_checkpoint`` as in :func:`read_checkpoint_file` (both default to the
    process settings, :func:`set_checkpoint_policy`). ``source`` names the checkpoint in errors (default: the path).
    ``head_layout_may_differ``: fine-tuning to another keypoint set or other classes, see :func:`prepare_state_dict`.
    """
    if isinstance(checkpoint, (str, os.PathLike)):
        source = source or str(checkpoint)
        checkpoint = read_model_checkpoint(model, checkpoint, map_location, trust_checkpoint)
    state_dict = extract_state_dict(checkpoint, source or 'the given state dict')
    dtypes = {k: v.dtype for k, v in model.state_dict().items()}
    state_dict, missing, unexpected = prepare_state_dict(state_dict, model, _expected_shapes(model), source, strict,
                                                         prefix, allow_non_finite_weights, dtypes,
                                                         head_layout_may_differ)
    model.load_state_dict(state_dict, strict=False)
    return missing, unexpected


def strict_load_checkpoint_for_sapiens2(upstream: Callable, applies_to: Callable[[nn.Module], bool]) -> Callable:
    """MMEngine's ``load_checkpoint`` as mmpose's/mmseg's ``init_model`` and mmdet's ``init_detector`` call it, except
    that models for which ``applies_to(model)`` holds (those with a Sapiens2 backbone) load strictly through
    :func:`load_model_weights` (``decode_head.`` -> ``head.`` for mmpose estimators); other models go to ``upstream``
    unchanged. Returns the checkpoint dict (its ``meta`` gives ``dataset_meta``)."""

    def load_checkpoint(model: nn.Module, filename: str, map_location: MapLocation = None, strict: bool = False,
                        logger=None, revise_keys: list = [(r'^module\.', '')]) -> dict:
        if not applies_to(model):
            return upstream(model, filename, map_location, strict, logger, revise_keys)
        from mmengine.runner.checkpoint import _load_checkpoint
        checkpoint = _load_checkpoint(filename, map_location or 'cpu', logger)
        _load_strictly(model, checkpoint, str(filename), revise_keys)
        return checkpoint

    load_checkpoint.__doc__ = strict_load_checkpoint_for_sapiens2.__doc__
    return load_checkpoint


def strict_load_checkpoint_dict_for_sapiens2(upstream: Callable, applies_to: Callable[[nn.Module], bool]
                                             ) -> Callable:
    """MMEngine's ``_load_checkpoint_to_model`` as its ``BaseInferencer`` (so ``MMPoseInferencer`` and
    ``MMSegInferencer``) calls it with ``strict=False``, except that models for which ``applies_to(model)`` holds load
    strictly (:func:`load_model_weights`): a head of another shape is a :class:`CheckpointMismatchError`, never a
    random head kept without a word."""

    def _load_checkpoint_to_model(model: nn.Module, checkpoint: dict, strict: bool = False, logger=None,
                                  revise_keys: list = [(r'^module\.', '')]) -> dict:
        if not applies_to(model):
            return upstream(model, checkpoint, strict, logger, revise_keys)
        _load_strictly(model, checkpoint, '(the inferencer\'s weights)', revise_keys)
        return checkpoint

    _load_checkpoint_to_model.__doc__ = strict_load_checkpoint_dict_for_sapiens2.__doc__
    return _load_checkpoint_to_model


def _load_strictly(model: nn.Module, checkpoint: Mapping, source: str, revise_keys: list) -> None:
    state_dict = extract_state_dict(checkpoint, source)
    for pattern, replacement in revise_keys:
        state_dict = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state_dict.items())
    load_model_weights(model, state_dict, strict=True, source=source)


def convert_checkpoint(src: str, dst: str, renames: Sequence[Tuple[str, str]] = (),
                       trust_checkpoint: Optional[bool] = None, overwrite: bool = False) -> StateDict:
    """Converts between .safetensors and torch (.pth) checkpoints, keeping the model weights and the ``meta``
    (e.g. ``dataset_meta``; entries a .safetensors file cannot carry are dropped with a warning).

    ``renames`` are (old prefix, new prefix) pairs applied to keys, e.g. ``('head.', 'decode_head.')`` to give a
    pose checkpoint trained with mmpose the official key layout. Tensors (and their dtypes) are kept bit-exact.
    An existing ``dst`` is replaced only with ``overwrite``; its suffix says the format (:data:`WRITABLE_SUFFIXES`).
    """
    check_checkpoint_suffix(dst)
    if osp.isdir(dst):
        raise IsADirectoryError(f'{dst} is a folder; give the converted checkpoint a file name (e.g. {dst}/model'
                                '.safetensors)')
    if osp.lexists(dst) and not overwrite:
        raise FileExistsError(f'{dst} already exists; choose another destination, or pass --overwrite '
                              '(overwrite=True) to replace it')
    checkpoint = read_checkpoint_file(src, 'cpu', trust_checkpoint)
    state_dict = extract_state_dict(checkpoint, src)
    meta = checkpoint.get('meta') if isinstance(checkpoint.get('meta'), Mapping) else {}
    for old, new in renames:
        state_dict = OrderedDict((new + k[len(old):] if k.startswith(old) else k, v) for k, v in state_dict.items())
    save_weights(state_dict, dst, serialisable_meta(meta) if dst.endswith('.safetensors') else meta)
    return state_dict


# ------------------------------------------------------------------------------------------------------- remote
def download_checkpoint(url: str, model_dir: Optional[str] = None, progress: bool = True, check_hash: bool = False,
                        file_name: Optional[str] = None) -> str:
    """Downloads ``url`` into the torch hub cache (``<hub dir>/checkpoints``, as ``torch.hub`` and MMEngine do)
    unless it is there already, and returns the local path; reading it is left to :func:`read_checkpoint_file`."""
    from urllib.parse import urlparse
    model_dir = model_dir or osp.join(torch.hub.get_dir(), 'checkpoints')
    os.makedirs(model_dir, exist_ok=True)
    cached = osp.join(model_dir, file_name or osp.basename(urlparse(url).path))
    if not osp.exists(cached):
        match = torch.hub.HASH_REGEX.search(osp.basename(cached)) if check_hash else None
        print_log(f'Downloading {url} to {cached}', logger='current')
        torch.hub.download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    return cached


# ------------------------------------------------------------------------------------------------------- resume
def find_resume_checkpoint(work_dir: str) -> Optional[str]:
    """The checkpoint ``--resume`` (without a path) continues from: the one the work dir's ``last_checkpoint``
    record names, when it is complete.

    No record: None (training starts from scratch, as in MMEngine). An empty record, one naming a file that does not
    exist, or one naming a truncated or damaged checkpoint (:func:`~sapiens2.engine.checkpoint_integrity.
    incomplete_reason`): the newest complete ``iter_*.pth``/``epoch_*.pth`` in the work dir, with a warning saying
    so; if there is none, ``FileNotFoundError`` naming the record.
    """
    record = osp.join(work_dir, 'last_checkpoint')
    if not osp.exists(record):
        print_log('Did not find last_checkpoint to be resumed.', logger='current')
        return None
    with open(record) as f:
        recorded = f.read().strip()
    latest = next((c for c in (recorded, osp.join(work_dir, recorded)) if recorded and osp.isfile(c)), None)
    if latest is None:
        problem = f'{record} is empty' if not recorded else f'{record} names {recorded}, which does not exist'
    else:
        reason = incomplete_reason(latest)
        if reason is None:
            return latest
        problem = f'the latest checkpoint {latest} is truncated or damaged ({reason})'
    newest, skipped = newest_complete_checkpoint(work_dir, exclude=latest or '')
    problem += ''.join(f', {path} too ({why})' for path, why in skipped)
    if newest is None:
        qualifier = 'other complete ' if latest else 'complete ' if skipped else ''
        raise FileNotFoundError(
            f'Cannot resume: {problem}, and {work_dir} holds no {qualifier}iter_*.pth or epoch_*.pth checkpoint. '
            f'Give the checkpoint with --resume PATH, or train from scratch without --resume (remove {record}).')
    again = ' (the iterations after it are trained again)' if latest else ''
    print_log(f'{problem[:1].upper()}{problem[1:]}; resuming from the newest complete checkpoint in the work dir '
              f'instead: {newest}{again}', logger='current', level=logging.WARNING)
    return newest
