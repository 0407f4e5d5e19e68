"""Writing checkpoints: the suffix says the format (``.safetensors`` with ``meta`` as JSON metadata, or a torch
file), every file is written atomically, and conversions keep the tensors bit-exact."""
import difflib
import os.path as osp
from collections import OrderedDict
from typing import Mapping, Optional, Sequence, Tuple

import torch

from sapiens2.utils.atomic_save import AtomicOutput

from .formats import (
    SAFETENSORS_META_KEY,
    StateDict,
    extract_state_dict,
    meta_to_json,
    read_checkpoint_file,
    serialisable_meta,
)

#: Suffixes of the checkpoint files :func:`save_weights` writes: safetensors, or a torch file.
WRITABLE_SUFFIXES = ('.safetensors', '.pth', '.pt')


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
                metadata = {SAFETENSORS_META_KEY: meta_to_json(meta)} if meta else None
            except TypeError as err:
                raise TypeError(f'meta for {path} cannot be stored as JSON ({err}); pass only str/number/list/dict/'
                                f'numpy values (sapiens2.engine.checkpoint.serialisable_meta filters it).') from err
            save_file({k: v.detach().contiguous().cpu() for k, v in state_dict.items()}, tmp, metadata=metadata)
        else:
            torch.save({'state_dict': OrderedDict(state_dict), 'meta': meta}, tmp)


def check_destination(dst: str, overwrite: bool = False) -> None:
    """One-line errors before any work: ``dst`` must have a checkpoint suffix, not be a folder, and exist only with
    ``overwrite``."""
    check_checkpoint_suffix(dst)
    if osp.isdir(dst):
        raise IsADirectoryError(f'{dst} is a folder; give the checkpoint a file name (e.g. {dst}/model.safetensors)')
    if osp.lexists(dst) and not overwrite:
        raise FileExistsError(f'{dst} already exists; choose another destination, or pass --overwrite '
                              '(overwrite=True) to replace it')


def save_checkpoint(state_dict: Mapping[str, torch.Tensor], meta: Mapping, dst: str) -> None:
    """:func:`save_weights` with a checkpoint's ``meta``, less what a ``.safetensors`` file cannot carry."""
    save_weights(state_dict, dst, serialisable_meta(meta) if dst.endswith('.safetensors') else meta)


def convert_checkpoint(src: str, dst: str, renames: Sequence[Tuple[str, str]] = (),
                       trust_checkpoint: Optional[bool] = None, overwrite: bool = False) -> StateDict:
    """Converts between .safetensors and torch (.pth) checkpoints, keeping the model weights and the ``meta``
    (e.g. ``dataset_meta``; entries a .safetensors file cannot carry are dropped with a warning).

    ``renames`` are (old prefix, new prefix) pairs applied to keys, e.g. ``('head.', 'decode_head.')`` to give a
    pose checkpoint trained with mmpose the official key layout. Tensors (and their dtypes) are kept bit-exact.
    An existing ``dst`` is replaced only with ``overwrite``; its suffix says the format (:data:`WRITABLE_SUFFIXES`).
    """
    check_destination(dst, overwrite)
    checkpoint = read_checkpoint_file(src, 'cpu', trust_checkpoint)
    state_dict = extract_state_dict(checkpoint, src)
    meta = checkpoint.get('meta') if isinstance(checkpoint.get('meta'), Mapping) else {}
    for old, new in renames:
        state_dict = OrderedDict((new + k[len(old):] if k.startswith(old) else k, v) for k, v in state_dict.items())
    save_checkpoint(state_dict, meta, dst)
    return state_dict
