"""Atomic file writes for MMEngine's local storage backend, so a killed save never leaves a truncated checkpoint.

Every checkpoint MMEngine writes (``Runner.save_checkpoint``, the strategies, ``CheckpointHook``) goes through
``get_file_backend(path).put(bytes, path)``. :mod:`sapiens2.adaptations` registers :class:`AtomicLocalBackend` as
the backend for local paths: it writes to a temporary file in the same folder, fsyncs it, then ``os.replace``s it
over the target, so the target is either the previous complete file or the new complete file. The new file gets
the permissions ``open(path, 'w')`` would give it: those of the file it replaces, else 0o666 less the umask.
"""
import contextlib
import errno
import glob
import io
import os
import shutil
import socket
import stat
import threading
from pathlib import Path

from mmengine.fileio import LocalBackend

CHECKPOINT_SUFFIXES = ('.pth', '.safetensors')
#: Held while a file is written: whoever must end the process mid-run takes it first, so no write is left half-done
#: (:mod:`sapiens2.engine.dist.agent_watchdog`).
WRITE_LOCK = threading.RLock()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + ``os.replace``), creating parent folders.

    Temporary files of earlier writes of ``path`` on this host whose process is gone (killed before committing)
    are removed first; concurrent writers of the same path (MMEngine dumps some logs on every rank) are left alone.
    A full disk (or quota) raises ``OSError(ENOSPC)`` saying which file, that the previous one is intact, and how
    much space is needed.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or '.'
    existed = os.path.exists(path)
    with WRITE_LOCK:
        tmp = create_temporary(path)
        try:
            with open(tmp, 'wb') as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as err:
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise OSError(err.errno, _disk_full_message(path, len(data), existed, err)) from err
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        _fsync_dir(folder)


def create_temporary(path: str) -> str:
    """Create the (empty) temporary file of an atomic write of ``path``, beside it, with the permissions
    ``open(path, 'w')`` would give ``path``: those of the file it replaces, else 0o666 less the umask. Temporary files
    of earlier writes whose process is gone are removed first."""
    folder = os.path.dirname(path) or '.'
    os.makedirs(folder, exist_ok=True)
    prefix = f'.{os.path.basename(path)}.{socket.gethostname()}.'
    _remove_dead_writers_files(folder, prefix)
    tmp = os.path.join(folder, f'{prefix}{os.getpid()}.tmp')
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the kernel applies the umask
    with contextlib.suppress(OSError):
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
    return tmp


def _disk_full_message(path: str, size: int, existed: bool, err: OSError) -> str:
    from .checkpoint_integrity import newest_complete_checkpoint  # here: this file also runs alone (its kill test)
    folder = os.path.dirname(path) or '.'
    free = shutil.disk_usage(folder).free
    kept = (f'the previous {os.path.basename(path)} is intact' if existed else f'no {os.path.basename(path)} was '
            'written')
    earlier, _ = newest_complete_checkpoint(folder, exclude=path)
    if earlier and path.endswith(CHECKPOINT_SUFFIXES):
        kept += (f', and the newest complete checkpoint there is {os.path.basename(earlier)} (--resume continues from '
                 'it)')
    return (f'{err.strerror} while writing {path}: it needs {_human(size)} and {folder} has {_human(free)} free. '
            f'Nothing was replaced: {kept}; the partial temporary file was removed. Free at least '
            f'{_human(max(size - free, 0) or size)} there (delete old checkpoints, lower max_keep_ckpts, or choose '
            'another --work-dir), then run again.')


def _human(size: float) -> str:
    for unit in ('bytes', 'KiB', 'MiB', 'GiB'):
        if size < 1024:
            return f'{size:.0f} {unit}' if unit == 'bytes' else f'{size:.1f} {unit}'
        size /= 1024
    return f'{size:.1f} TiB'


def _remove_dead_writers_files(folder: str, prefix: str) -> None:
    for stale in glob.glob(os.path.join(glob.escape(folder), f'{glob.escape(prefix)}*.tmp')):
        pid = stale[len(os.path.join(folder, prefix)):-len('.tmp')]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.remove(stale)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(folder: str) -> None:
    """Persist the rename itself (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AtomicTextWriter(io.StringIO):
    """A text file being written: on a clean exit of its ``with`` block, its content replaces ``path`` atomically
    (:func:`atomic_write_bytes`); after an error, ``path`` is left as it was."""

    def __init__(self, path: str | Path, encoding: str = 'utf-8') -> None:
        super().__init__()
        self.path, self.text_encoding = path, encoding

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            atomic_write_bytes(self.path, self.getvalue().encode(self.text_encoding))
        self.close()


def open_writing_atomically(file, mode: str = 'r', *args, encoding: str | None = None, **kwargs):
    """``open`` whose text writes (mode 'w') are :class:`AtomicTextWriter` s; every other mode is ``open``'s."""
    if mode in ('w', 'wt') and not args and not kwargs:
        return AtomicTextWriter(file, encoding or 'utf-8')
    return open(file, mode, *args, encoding=encoding, **kwargs)


class AtomicLocalBackend(LocalBackend):
    """MMEngine ``LocalBackend`` whose ``put``/``put_text`` are atomic."""

    def put(self, obj: bytes, filepath: str | Path) -> None:
        atomic_write_bytes(filepath, obj)

    def put_text(self, obj: str, filepath: str | Path, encoding: str = 'utf-8') -> None:
        atomic_write_bytes(filepath, obj.encode(encoding))

