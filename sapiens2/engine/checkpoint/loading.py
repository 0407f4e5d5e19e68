"""Loading a checkpoint into a model with sapiens2's policy (fit checks, then :mod:`.validation`), and the strict
replacements of the loaders of MMEngine's ``BaseInferencer`` and of mmpose/mmseg/mmdet ``init_model`` that
:mod:`sapiens2.adaptations` installs."""
import os
import re
from collections import OrderedDict
from typing import Callable, List, Mapping, Optional, Tuple, Union

import torch
from torch import nn

from .fit_checks import check_checkpoint_fit
from .formats import extract_state_dict, read_checkpoint_file
from .schemes import resolve_checkpoint_path
from .torch_files import MapLocation
from .validation import expected_shapes, prepare_state_dict


def read_model_checkpoint(model: nn.Module, checkpoint: str, map_location: MapLocation = 'cpu',
                          trust_checkpoint: Optional[bool] = None) -> dict:
    """The checkpoint dict (weights and ``meta``, e.g. ``dataset_meta``) of a file or registered URI that is about to
    be loaded into ``model``, after the registered fit checks
    (:func:`~sapiens2.engine.checkpoint.register_checkpoint_check`)."""
    path = resolve_checkpoint_path(checkpoint)
    check_checkpoint_fit(model, path)
    return read_checkpoint_file(path, map_location, trust_checkpoint)


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
    state_dict, missing, unexpected = prepare_state_dict(state_dict, model, expected_shapes(model), source, strict,
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

    return _presented_as(load_checkpoint, strict_load_checkpoint_for_sapiens2)


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

    return _presented_as(_load_checkpoint_to_model, strict_load_checkpoint_dict_for_sapiens2)


def _presented_as(replacement: Callable, factory: Callable) -> Callable:
    """``replacement`` with the docstring of its ``factory`` and the package's name as its module, which is what
    ``help()`` of the patched upstream function shows."""
    replacement.__doc__ = factory.__doc__
    replacement.__module__ = __package__
    return replacement


def _load_strictly(model: nn.Module, checkpoint: Mapping, source: str, revise_keys: list) -> None:
    state_dict = extract_state_dict(checkpoint, source)
    for pattern, replacement in revise_keys:
        state_dict = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state_dict.items())
    load_model_weights(model, state_dict, strict=True, source=source)


