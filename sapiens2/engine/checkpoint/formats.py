"""Reading the checkpoint formats: official ``.safetensors`` files (bare pretrain keys or ``backbone.``/
``decode_head.`` task keys, with an optional JSON ``meta``) and torch files (MMEngine training checkpoints,
``{'state_dict'|'model'|'teacher': ...}`` wrappers or bare state dicts), whatever their suffix says."""
import json
import os
import os.path as osp
import re
import warnings
from collections import OrderedDict
from typing import Any, Dict, Mapping, Optional

import numpy as np
import torch
from torch import nn

from sapiens2.utils.strict_json import dumps, finite

from ..dtype_labels import check_half_precision_labels
from .errors import CheckpointContentError, UnsafeCheckpointError
from .integrity import file_format
from .policy import checkpoint_trusted
from .schemes import resolve_checkpoint_path
from .torch_files import MapLocation, torch_load

StateDict = Dict[str, torch.Tensor]
SAFETENSORS_META_KEY = 'meta'


def meta_to_json(meta: Mapping) -> str:
    """A checkpoint ``meta`` as the JSON a ``.safetensors`` file carries (numpy arrays and tensors tagged; NaN as
    null, which a tagged array reads back as NaN)."""

    def encode(value):
        if isinstance(value, torch.Tensor):
            value = value.numpy(force=True)
        if isinstance(value, np.ndarray):
            return {'__ndarray__': finite(value.tolist()), 'dtype': str(value.dtype)}
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, dict):
            return {key: encode(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [encode(item) for item in value]
        return value  # json.dumps refuses what it cannot encode (TypeError)

    return dumps(encode(dict(meta)))


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
            meta_to_json({key: value})
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


def _refuse_torch_file_named_safetensors(path: str, found: str) -> None:
    """A torch file renamed ``.safetensors`` is not "truncated or corrupt": say what it is (it is not unpickled:
    the name promised a file without pickled code) and how to make it a .safetensors file."""
    kind = 'a zip archive of torch.save' if found == 'torch-zip' else 'a legacy torch.save pickle'
    stem = path[:-len('.safetensors')]
    raise ValueError(f'{path} is a torch pickle file ({kind}), not a .safetensors file, despite its name; it is not '
                     'loaded (its name promised no pickled code). Rename it to .pth (mv '
                     f'{path} {stem}.pth): it then loads as a torch checkpoint (weights only), and python '
                     f'tools/convert_checkpoint.py {stem}.pth {stem}.safetensors converts it.')


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
    when absent); anything else -> ``torch.load`` with ``weights_only=True`` and
    :func:`~sapiens2.engine.checkpoint.safe_globals`, unless ``trust_checkpoint`` (default: the process setting,
    :func:`~sapiens2.engine.checkpoint.set_checkpoint_policy`).
    """
    path = resolve_checkpoint_path(path)
    if osp.isdir(path):
        raise IsADirectoryError(_folder_given(path))
    if not osp.isfile(path):
        raise FileNotFoundError(f'Checkpoint {path} does not exist; pass a local .safetensors or .pth file, a Hub '
                                f'reference hf://org/repo[@revision][/<file>], or a model alias (`sapiens2 models` '
                                f'lists them).')
    found = file_format(path)
    if path.endswith('.safetensors'):
        if found in ('torch-zip', 'pickle'):
            _refuse_torch_file_named_safetensors(path, found)
        return _read_safetensors(path)
    if found == 'safetensors':
        warnings.warn(f'{path} is a .safetensors file under another suffix; it is loaded as one (safely, no pickle). '
                      'Rename it to .safetensors.', stacklevel=2)
        return _read_safetensors(path)
    if found is None:
        raise ValueError(f'{path} is not a checkpoint: neither a torch file (zip archive or pickle) nor a .safetensors '
                         'file; pass a checkpoint saved by training, tools/convert_checkpoint.py or torch.save.')
    trusted = checkpoint_trusted() if trust_checkpoint is None else bool(trust_checkpoint)
    try:
        checkpoint = torch_load(path, map_location, trusted)
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


def load_weights(path: str, map_location: MapLocation = 'cpu',
                 trust_checkpoint: Optional[bool] = None) -> StateDict:
    """Reads the state dict of any supported checkpoint file."""
    return extract_state_dict(read_checkpoint_file(path, map_location, trust_checkpoint), str(path))
