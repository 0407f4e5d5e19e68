"""Whether a checkpoint file is complete, read from its structure alone (cheap: no tensor is loaded), and the newest
complete checkpoint of a work dir, for ``--resume`` after a checkpoint was truncated (copied or synced in part, a
full disk outside sapiens2's atomic writes).

A torch zip checkpoint is complete when its zip central directory (at the end of the file) parses; a
``.safetensors`` file when its size is its header's 8 + header length + data length. Other files (legacy torch
pickles, remote URIs) are not checked here: their loader reports their problems.
"""
import json
import os
import os.path as osp
import re
import struct
import zipfile
from typing import List, Optional, Tuple

RESUMABLE = re.compile(r'^(iter|epoch)_(\d+)\.pth$')


def incomplete_reason(path: str) -> Optional[str]:
    """Why the checkpoint file ``path`` is truncated or damaged, or None when it looks complete (or is not checked)."""
    if not osp.isfile(path):
        return None
    with open(path, 'rb') as f:
        head = f.read(8)
    if path.endswith('.safetensors'):
        return _safetensors_problem(path, head)
    if not head:
        return 'empty file'
    if file_format(path) is None:
        return 'not a checkpoint: neither a torch zip archive, a pickle nor a .safetensors file'
    if head[:4] != b'PK\x03\x04':
        return None  # a legacy (non-zip) torch file or a misnamed .safetensors one: left to their loader
    try:
        with zipfile.ZipFile(path):
            return None
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        return f'its zip directory cannot be read: {err}'


def file_format(path: str) -> Optional[str]:
    """What a checkpoint file is by its first bytes, whatever its suffix: ``'safetensors'`` (8-byte header length,
    then a JSON header that fits the file), ``'torch-zip'``, ``'pickle'`` (a legacy torch file), or None."""
    with open(path, 'rb') as f:
        head = f.read(9)
    if head[:4] == b'PK\x03\x04':
        return 'torch-zip'
    # before the pickle test: a header length whose low byte is 0x80 (e.g. 384) starts like a pickle
    if len(head) == 9 and head[8:9] == b'{' and struct.unpack('<Q', head[:8])[0] <= os.path.getsize(path) - 8:
        return 'safetensors'
    if head[:1] == b'\x80':  # the PROTO opcode every pickle of protocol 2 and later starts with
        return 'pickle'
    return None


def _safetensors_problem(path: str, head: bytes) -> Optional[str]:
    size = os.path.getsize(path)
    if len(head) < 8:
        return f'{size} bytes, shorter than a safetensors header'
    (header_len, ) = struct.unpack('<Q', head)
    try:
        with open(path, 'rb') as f:
            f.seek(8)
            header = json.loads(f.read(header_len))
        data_len = max((int(v['data_offsets'][1]) for k, v in header.items() if k != '__metadata__'), default=0)
    except (ValueError, KeyError, TypeError, IndexError) as err:
        return f'its header cannot be read: {err}'
    expected = 8 + header_len + data_len
    return None if size >= expected else f'{size} of the {expected} bytes its header announces'


def newest_complete_checkpoint(work_dir: str, exclude: str = '') -> Tuple[Optional[str], List[Tuple[str, str]]]:
    """The newest ``iter_*.pth`` / ``epoch_*.pth`` of ``work_dir`` that is complete (latest modification first, then
    highest step), other than ``exclude``; and the (path, reason) of the newer ones skipped as incomplete."""
    found = [osp.join(work_dir, name) for name in os.listdir(work_dir) if RESUMABLE.match(name)]
    skipped = []
    for path in sorted(found, key=_newest_first, reverse=True):
        if osp.abspath(path) == osp.abspath(exclude):
            continue
        reason = incomplete_reason(path)
        if reason is None:
            return path, skipped
        skipped.append((path, reason))
    return None, skipped


def _newest_first(path: str) -> Tuple[float, int]:
    return osp.getmtime(path), int(RESUMABLE.match(osp.basename(path)).group(2))
