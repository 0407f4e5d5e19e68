"""Uniform weight averaging (a "model soup"): the mean of checkpoints trained on from one start often does better on
data unlike the training set than each of them (Wortsman et al., 2022); docs/checkpoints.md."""
from collections import OrderedDict
from typing import Mapping, Optional, Sequence

import torch

from .errors import CheckpointMismatchError
from .formats import StateDict, extract_state_dict, load_weights, read_checkpoint_file


def _check_same_layout(first: StateDict, other: StateDict, first_path: str, path: str) -> None:
    """One line naming the first key whose presence, shape or (for integer tensors) value differs."""
    unshared = sorted(set(first) ^ set(other))
    if unshared:
        key = unshared[0]
        holder, lacking = (first_path, path) if key in first else (path, first_path)
        raise CheckpointMismatchError(f'{holder} holds {key} and {lacking} does not: only checkpoints of one model '
                                      f'can be averaged')
    for key, value in other.items():
        if value.shape != first[key].shape:
            raise CheckpointMismatchError(f'{key} is {tuple(value.shape)} in {path} and {tuple(first[key].shape)} in '
                                          f'{first_path}: only checkpoints of one model can be averaged')
        if not value.is_floating_point() and not torch.equal(value, first[key]):
            raise CheckpointMismatchError(f'{key} (a {value.dtype} tensor, e.g. a counter) differs between {path} '
                                          f'and {first_path}; it has no mean')


def average_checkpoints(paths: Sequence[str], trust_checkpoint: Optional[bool] = None) -> dict:
    """``{'state_dict': the mean of the floating-point weights of paths, 'meta': the first file's meta}``: the sum is
    taken in fp32 and stored in the first file's dtypes; integer tensors must be equal in all files. Files are read
    through the one checkpoint loader (torch files with ``weights_only`` unless trusted)."""
    if len(paths) < 2:
        raise ValueError(f'averaging needs at least two checkpoints, got {len(paths)}')
    checkpoint = read_checkpoint_file(paths[0], 'cpu', trust_checkpoint)
    first = extract_state_dict(checkpoint, paths[0])
    total = OrderedDict((k, v.float() if v.is_floating_point() else v) for k, v in first.items())
    for path in paths[1:]:
        other = load_weights(path, 'cpu', trust_checkpoint)
        _check_same_layout(first, other, paths[0], path)
        for key, value in other.items():
            if value.is_floating_point():
                total[key] += value.float()
    meta = checkpoint.get('meta')
    return dict(state_dict=OrderedDict((k, (v / len(paths)).to(first[k].dtype) if v.is_floating_point() else v)
                                       for k, v in total.items()),
                meta=dict(meta) if isinstance(meta, Mapping) else {})
