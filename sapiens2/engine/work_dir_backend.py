"""MMEngine's local file backend and ``CheckpointHook``'s ``open``, made atomic (:mod:`sapiens2.utils.atomic_save`)
and guarded by the work dir's record (:mod:`.work_dir_record`): training never writes over or removes a
checkpoint-named file it did not write. Apart from both, so that they import one way."""
import io
import os
from pathlib import Path

from mmengine.fileio import LocalBackend

from sapiens2.utils.atomic_save import atomic_write_bytes

from .work_dir_record import check_write, may_remove, note_written


class AtomicTextWriter(io.StringIO):
    """A text file being written: on a clean exit of its ``with`` block, its content replaces ``path`` atomically
    (:func:`atomic_write_bytes`); after an error, ``path`` is left as it was."""

    def __init__(self, path: str | Path, encoding: str = 'utf-8') -> None:
        super().__init__()
        self.path, self.text_encoding = path, encoding

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            _write_in_work_dir(self.path, self.getvalue().encode(self.text_encoding))
        self.close()


def open_writing_atomically(file, mode: str = 'r', *args, encoding: str | None = None, **kwargs):
    """``open`` whose text writes (mode 'w') are :class:`AtomicTextWriter` s; every other mode is ``open``'s."""
    if mode in ('w', 'wt') and not args and not kwargs:
        return AtomicTextWriter(file, encoding or 'utf-8')
    return open(file, mode, *args, encoding=encoding, **kwargs)


def _write_in_work_dir(path: str | Path, data: bytes) -> None:
    """:func:`atomic_write_bytes`, refused for a checkpoint name of a training work dir that training did not write
    there, and recorded (:mod:`sapiens2.engine.work_dir_record`)."""
    check_write(os.fspath(path))
    atomic_write_bytes(path, data)
    note_written(os.fspath(path))


class AtomicLocalBackend(LocalBackend):
    """MMEngine ``LocalBackend`` whose ``put``/``put_text`` are atomic and never go through a link, and which
    never writes over or removes a checkpoint-named file of a training work dir that training did not write
    (:mod:`sapiens2.engine.work_dir_record`)."""

    def put(self, obj: bytes, filepath: str | Path) -> None:
        _write_in_work_dir(filepath, obj)

    def put_text(self, obj: str, filepath: str | Path, encoding: str = 'utf-8') -> None:
        _write_in_work_dir(filepath, obj.encode(encoding))

    def remove(self, filepath: str | Path) -> None:
        if may_remove(os.fspath(filepath)):
            super().remove(filepath)

    def rmtree(self, dir_path: str | Path) -> None:
        if may_remove(os.fspath(dir_path)):
            super().rmtree(dir_path)

