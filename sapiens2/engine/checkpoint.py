"""Checkpoint I/O: official .safetensors and MMEngine .pth files, strict by default.

Handles bare pretrain keys, ``backbone.``/``decode_head.`` task keys, the ``state_dict``/``model``/``teacher``
wrappers the official backbone loader accepts, MMEngine training checkpoints, and the ``decode_head.`` -> ``head.``
renaming that mmpose's estimators need.
"""
import os
import os.path as osp
import re
import tempfile
from collections import OrderedDict
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch
from mmengine.logging import MMLogger
from torch import nn

StateDict = Dict[str, torch.Tensor]
_MAX_LISTED_KEYS = 20


class CheckpointMismatchError(RuntimeError):
    """The checkpoint's keys or shapes do not match the model."""


def _read_safetensors(path: str) -> StateDict:
    from safetensors import SafetensorError
    from safetensors.torch import load_file
    try:
        return load_file(path)
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(f'{path} is not a readable .safetensors file ({err}); the file may be truncated or '
                         f'corrupt: download or export it again.') from err


def read_checkpoint_file(path: str, map_location: Union[str, torch.device] = 'cpu') -> dict:
    """Reads a checkpoint file as a dict: .safetensors -> its tensors, anything else -> ``torch.load``.

    Torch files are read with ``weights_only=False`` because MMEngine's training checkpoints pickle Python objects
    (message hub, history buffers); only load checkpoints you trust.
    """
    path = osp.expanduser(str(path))
    if not osp.isfile(path):
        raise FileNotFoundError(f'Checkpoint {path} does not exist; pass a local .safetensors or .pth file '
                                f'(nothing is downloaded).')
    if path.endswith('.safetensors'):
        return _read_safetensors(path)
    try:
        return torch.load(path, map_location=map_location, weights_only=False)
    except Exception as err:  # torch raises many types for truncated/corrupt files
        raise ValueError(f'{path} could not be read as a torch checkpoint ({type(err).__name__}: {err}); '
                         f'the file may be truncated or corrupt.') from err


def extract_state_dict(checkpoint: Mapping) -> StateDict:
    """Unwraps ``state_dict``, then ``model``, then ``teacher`` (stripping its ``backbone.`` prefix)."""
    for key in ('state_dict', 'model'):
        if key in checkpoint and isinstance(checkpoint[key], Mapping):
            checkpoint = checkpoint[key]
            break
    else:
        if 'teacher' in checkpoint and isinstance(checkpoint['teacher'], Mapping):
            checkpoint = OrderedDict((re.sub(r'^backbone\.', '', k), v) for k, v in checkpoint['teacher'].items())
    bad = [k for k, v in checkpoint.items() if not isinstance(v, torch.Tensor)]
    if bad:
        raise ValueError(f'The checkpoint holds non-tensor entries {bad[:5]}; expected a state dict of tensors.')
    return OrderedDict(checkpoint)


def load_weights(path: str, map_location: Union[str, torch.device] = 'cpu') -> StateDict:
    """Reads the state dict of any supported checkpoint file."""
    return extract_state_dict(read_checkpoint_file(path, map_location))


def save_weights(state_dict: Mapping[str, torch.Tensor], path: str, metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes a state dict atomically: ``.safetensors`` by suffix (with the optional string ``metadata``, e.g.
    ``{'format': 'pt'}`` as transformers writes), otherwise a torch file ``{'state_dict': ...}``."""
    path = osp.expanduser(str(path))
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=osp.dirname(osp.abspath(path)), suffix='.tmp')
    os.close(fd)
    try:
        if path.endswith('.safetensors'):
            from safetensors.torch import save_file
            save_file({k: v.detach().contiguous().cpu() for k, v in state_dict.items()}, tmp, metadata=metadata)
        else:
            torch.save({'state_dict': OrderedDict(state_dict)}, tmp)
        os.replace(tmp, path)
    finally:
        if osp.exists(tmp):
            os.remove(tmp)


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
    own = model.state_dict()
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    mismatched = [k for k, v in state_dict.items() if k in own and tuple(v.shape) != tuple(own[k].shape)]
    return missing, unexpected, mismatched


def load_model_weights(model: nn.Module,
                       checkpoint: Union[str, Mapping[str, torch.Tensor]],
                       strict: bool = True,
                       prefix: Optional[str] = None,
                       map_location: Union[str, torch.device] = 'cpu') -> Tuple[List[str], List[str]]:
    """Loads a checkpoint file or state dict into ``model``.

    Strict by default: any missing, unexpected or shape-mismatched key raises :class:`CheckpointMismatchError`
    listing them. With ``strict=False`` the matching tensors are loaded, the rest is logged, and
    (missing, unexpected) is returned.
    """
    source = checkpoint if isinstance(checkpoint, str) else 'the given state dict'
    state_dict = load_weights(checkpoint, map_location) if isinstance(checkpoint, str) \
        else extract_state_dict(checkpoint)
    state_dict = adapt_keys(state_dict, model, prefix)
    missing, unexpected, mismatched = compare_keys(model, state_dict)
    if missing or unexpected or mismatched:
        own = model.state_dict()
        shapes = [f'{k} (checkpoint {tuple(state_dict[k].shape)} vs model {tuple(own[k].shape)})' for k in mismatched]
        message = (f'Checkpoint {source} does not match {type(model).__name__}:' + _listing('missing', missing) +
                   _listing('unexpected', unexpected) + _listing('shape mismatch', shapes))
        if strict:
            raise CheckpointMismatchError(
                message + '\nCheck the arch/task of the config and the checkpoint, or load partially with '
                'strict=False (init_cfg=dict(..., strict=False) or `load_strict = False` in the config).')
        MMLogger.get_current_instance().warning(message)
        state_dict = OrderedDict((k, v) for k, v in state_dict.items() if k not in unexpected and k not in mismatched)
    model.load_state_dict(state_dict, strict=False)
    return missing, unexpected


def convert_checkpoint(src: str, dst: str, renames: Sequence[Tuple[str, str]] = ()) -> StateDict:
    """Converts between .safetensors and torch (.pth) checkpoints, keeping only the model weights.

    ``renames`` are (old prefix, new prefix) pairs applied to keys, e.g. ``('head.', 'decode_head.')`` to give a
    pose checkpoint trained with mmpose the official key layout. Tensors (and their dtypes) are kept bit-exact.
    """
    state_dict = load_weights(src)
    for old, new in renames:
        state_dict = OrderedDict((new + k[len(old):] if k.startswith(old) else k, v) for k, v in state_dict.items())
    save_weights(state_dict, dst)
    return state_dict
