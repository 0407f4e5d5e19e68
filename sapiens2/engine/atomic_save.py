"""Atomic file writes for MMEngine's local storage backend, so a killed save never leaves a truncated checkpoint.

Every checkpoint MMEngine writes (``Runner.save_checkpoint``, the strategies, ``CheckpointHook``) goes through
``get_file_backend(path).put(bytes, path)``. :mod:`sapiens2.adaptations` registers :class:`AtomicLocalBackend` as
the backend for local paths: it writes to a temporary file in the same folder, fsyncs it, then ``os.replace``s it
over the target, so the target is either the previous complete file or the new complete file.
"""
import contextlib
import glob
import os
import socket
from pathlib import Path

from mmengine.fileio import LocalBackend


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + ``os.replace``), creating parent folders.

    Temporary files of earlier writes of ``path`` on this host whose process is gone (killed before committing)
    are removed first; concurrent writers of the same path (MMEngine dumps some logs on every rank) are left alone.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or '.'
    os.makedirs(folder, exist_ok=True)
    prefix = f'.{os.path.basename(path)}.{socket.gethostname()}.'
    _remove_dead_writers_files(folder, prefix)
    tmp = os.path.join(folder, f'{prefix}{os.getpid()}.tmp')
    try:
        with open(tmp, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    _fsync_dir(folder)


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


class AtomicLocalBackend(LocalBackend):
    """MMEngine ``LocalBackend`` whose ``put``/``put_text`` are atomic."""

    def put(self, obj: bytes, filepath: str | Path) -> None:
        atomic_write_bytes(filepath, obj)

    def put_text(self, obj: str, filepath: str | Path, encoding: str = 'utf-8') -> None:
        atomic_write_bytes(filepath, obj.encode(encoding))

