"""What a state dict must satisfy before it loads into a model, and its keys mapped to the model's naming:

* **strict**: any missing, unexpected or shape-mismatched key raises :class:`CheckpointMismatchError` unless
  ``strict=False`` (a head of another layout may differ when fine-tuning, :func:`other_head_layout`);
* **finite**: NaN/Inf weights raise :class:`NonFiniteWeightsError` naming the tensors unless
  ``allow_non_finite_weights=True`` (argument, ``init_cfg`` key or config key);
* **floating**: an integer or bool tensor for a floating-point weight of the model raises :class:`WeightDtypeError`
  naming it (``load_state_dict`` would cast its values as they are: a weight stored as the integer 27 becomes 27.0).
"""
import os.path as osp
import re
from collections import OrderedDict
from typing import Dict, List, Mapping, Optional, Tuple

import torch
from mmengine.logging import MMLogger
from torch import nn

from .errors import CheckpointMismatchError, NonFiniteWeightsError, WeightDtypeError
from .formats import StateDict
from .policy import non_finite_weights_allowed

_MAX_LISTED_KEYS = 20
_MAX_LISTED_NON_FINITE = 10


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
    return _compare(expected_shapes(model), state_dict)


def expected_shapes(model: nn.Module) -> Dict[str, Optional[tuple]]:
    """The key -> shape mapping of ``model``'s state dict, which :func:`prepare_state_dict` checks against."""
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
        allow_non_finite_weights = non_finite_weights_allowed()
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
