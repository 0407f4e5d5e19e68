"""The checkpoint files training wrote into a work directory, so that it never replaces or deletes a user's file.

MMEngine writes ``iter_N.pth`` / ``epoch_N.pth`` / ``best_*.pth`` and ``last_checkpoint`` into the work dir over
whatever is there, and ``max_keep_ckpts`` / a new best delete older ones by name. Rank 0 of a training run therefore
keeps a record, ``<work_dir>/.sapiens2_checkpoints.json``, of the files of those names that training wrote there:

* before the first iteration (:func:`claim_checkpoints`), a file of those names that the record does not list stops
  the run with one line naming it and the fixes; with ``--resume`` (or auto-resume), such a file is adopted when it
  is a real MMEngine training checkpoint (a torch zip archive whose top-level entries include ``meta``,
  ``state_dict`` and ``message_hub``, read without running its pickled code), and ``last_checkpoint`` when it names
  a recorded or adopted checkpoint: work dirs of runs made before the record existed resume as before;
* during the run, the atomic local backend (:mod:`sapiens2.utils.atomic_save`) asks :func:`check_write` before it
  writes such a name, records it after (:func:`note_written`), and asks :func:`may_remove` before a delete, which
  leaves a file the record does not list where it is, with a warning.
"""
import fnmatch
import logging
import os
import os.path as osp
import pickletools
import zipfile
from typing import Dict, List, Optional, Set

from mmengine.logging import print_log

RECORD_NAME = '.sapiens2_checkpoints.json'
#: The names MMEngine's checkpointing writes and deletes in a work dir.
CHECKPOINT_NAMES = ('iter_*.pth', 'epoch_*.pth', 'best_*.pth', 'iter_*.safetensors', 'epoch_*.safetensors',
                    'best_*.safetensors', 'last_checkpoint')
#: Top-level entries of a checkpoint of ``Runner.save_checkpoint``.
TRAINING_CHECKPOINT_KEYS = frozenset({'meta', 'state_dict', 'message_hub'})
_RECORDS: Dict[str, 'WorkDirRecord'] = {}  # real path of a work dir claimed in this process -> its record


def _warn(message: str) -> None:
    print_log(message, logger='current', level=logging.WARNING)


def is_checkpoint_name(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in CHECKPOINT_NAMES)


class WorkDirRecord:
    """The record of ``work_dir`` (see the module docstring)."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.path = osp.join(work_dir, RECORD_NAME)
        self.files: Set[str] = self._read()

    def strangers(self) -> List[str]:
        """The files of checkpoint names in the work dir that the record does not list."""
        names = os.listdir(self.work_dir) if osp.isdir(self.work_dir) else []
        return sorted(name for name in names if is_checkpoint_name(name) and name not in self.files
                      and osp.lexists(osp.join(self.work_dir, name)))

    def add(self, names: List[str]) -> None:
        """List ``names`` (and forget listed files that are gone); rewrites the record atomically."""
        from sapiens2.utils.atomic_save import write_file_list
        self.files = {name for name in self.files if osp.lexists(osp.join(self.work_dir, name))} | set(names)
        write_file_list(self.path, 'sapiens2 training', self.files)

    def _read(self) -> Set[str]:
        from sapiens2.utils.atomic_save import read_file_list
        try:
            return read_file_list(self.path)
        except ValueError as err:
            _warn(f'{self.path} is not a readable sapiens2 record ({err}): the checkpoints in {self.work_dir} count '
                  'as not written by sapiens2')
            return set()


def is_training_checkpoint(path: str) -> bool:
    """Whether ``path`` is a torch zip checkpoint whose top-level entries include :data:`TRAINING_CHECKPOINT_KEYS`
    (its pickle is scanned, never run)."""
    try:
        with zipfile.ZipFile(path) as archive:
            name = next((n for n in archive.namelist() if n.rpartition('/')[2] == 'data.pkl'), None)
            if name is None:
                return False
            data = archive.read(name)
        strings = {arg for op, arg, _ in pickletools.genops(data) if isinstance(arg, str)}
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False
    return TRAINING_CHECKPOINT_KEYS <= strings


def _adoptable(work_dir: str, name: str, owned: Set[str]) -> bool:
    path = osp.join(work_dir, name)
    if osp.islink(path) or not osp.isfile(path):
        return False
    if name != 'last_checkpoint':
        return is_training_checkpoint(path)
    try:
        with open(path) as f:
            named = f.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return False
    return osp.realpath(osp.dirname(osp.join(work_dir, named))) == osp.realpath(work_dir) and \
        osp.basename(named) in owned


def claim_checkpoints(work_dir: str, resume: bool = False) -> WorkDirRecord:
    """Take the record of ``work_dir`` for this process (see the module docstring); ``FileExistsError`` (one line)
    when a file of a checkpoint name there was not written by sapiens2 training (with ``resume``: and is not an
    adoptable checkpoint). Nothing is written then."""
    path = osp.join(work_dir, RECORD_NAME)
    if osp.lexists(path) and not osp.isfile(path):
        what = 'a symbolic link' if osp.islink(path) else 'a folder' if osp.isdir(path) else 'not a regular file'
        raise FileExistsError(
            f'--work-dir {work_dir}: {path} is {what}, where training keeps its record of the checkpoints it wrote '
            '(a file, written after each checkpoint): the first checkpoint save would fail. Move it away, or choose '
            'another --work-dir.')
    record = WorkDirRecord(work_dir)
    strangers = record.strangers()
    if resume and strangers:
        adopted = {name for name in strangers if name != 'last_checkpoint' and _adoptable(work_dir, name, set())}
        if 'last_checkpoint' in strangers and _adoptable(work_dir, 'last_checkpoint', record.files | adopted):
            adopted.add('last_checkpoint')
        strangers = [name for name in strangers if name not in adopted]
        if adopted and not strangers:
            _warn(f'--resume adopts {", ".join(sorted(adopted))} in {work_dir} (training checkpoints of a run made '
                  f'before sapiens2 recorded its checkpoints in {RECORD_NAME})')
            record.add(sorted(adopted))
    if strangers:
        shown = ', '.join(strangers[:5]) + (f' and {len(strangers) - 5} more' if len(strangers) > 5 else '')
        raise FileExistsError(
            f'--work-dir {work_dir} holds {shown}, which sapiens2 training did not write (not listed in '
            f'{osp.join(work_dir, RECORD_NAME)}{"; not resumable training checkpoints" if resume else ""}): '
            'training would write over or delete such files. Choose another --work-dir, move them away, or pass '
            '--resume when they are this run\'s own checkpoints')
    _RECORDS[osp.realpath(work_dir)] = record
    return record


def release_checkpoints(work_dir: str) -> None:
    """Forget the record :func:`claim_checkpoints` took in this process (tests, a second run in one process)."""
    _RECORDS.pop(osp.realpath(work_dir), None)


def _record_of(path: str) -> Optional[WorkDirRecord]:
    if not is_checkpoint_name(osp.basename(path)):
        return None
    return _RECORDS.get(osp.realpath(osp.dirname(osp.abspath(path))))


def check_write(path: str) -> None:
    """``FileExistsError`` (one line) when writing ``path`` would replace a file of a claimed work dir's checkpoint
    names that its record does not list (one put there after the run started)."""
    record = _record_of(path)
    name = osp.basename(path)
    if record is not None and osp.lexists(path) and name not in record.files:
        raise FileExistsError(
            f'{path} appeared in the work dir during training and was not written by it (not listed in '
            f'{record.path}); nothing was replaced: move it away and resume with --resume')


def note_written(path: str) -> None:
    """List ``path`` in its claimed work dir's record (no-op elsewhere)."""
    record = _record_of(path)
    if record is not None and osp.basename(path) not in record.files:
        record.add([osp.basename(path)])


def may_remove(path: str) -> bool:
    """Whether a checkpoint delete (``max_keep_ckpts``, a new best) may remove ``path``: not when it lies in a
    claimed work dir whose record does not list it (a warning says so)."""
    record = _record_of(path)
    if record is None or osp.basename(path) in record.files:
        return True
    _warn(f'{path} was not removed: training did not write it (not listed in {record.path})')
    return False
