"""The work directory of a run: a path that can be a folder, and one live training run in it at a time.

Two training runs in one work directory overwrite each other's ``iter_*.pth``, ``last_checkpoint`` and config dump.
Rank 0 of a training run therefore holds an exclusive operating-system lock (``fcntl.flock``) on
``<work_dir>/.sapiens2-train.lock`` for as long as it lives, and a second run fails at start, naming the first one's
pid, before it writes anything there. The kernel releases the lock when the process ends, however it ends (kill -9
included), so nothing stale is left: a later run takes the same file over.
"""
import fcntl
import os
import os.path as osp
import socket
from typing import Dict, Optional

LOCK_NAME = '.sapiens2-train.lock'
_HELD: Dict[str, int] = {}  # real path of a work dir -> the open lock file, kept open for the life of the process


class WorkDirInUseError(OSError):
    """Another live training run holds the work directory's lock."""


def check_work_dir(work_dir: str, option: str = '--work-dir') -> None:
    """Raise ``NotADirectoryError`` naming the file when ``work_dir`` is, or passes through, an existing file (MMEngine
    would fail with a bare ``[Errno 17] File exists``). Creates nothing."""
    path = osp.abspath(work_dir)
    parts = path.split(os.sep)
    for depth in range(2, len(parts) + 1):
        prefix = os.sep.join(parts[:depth])
        if osp.exists(prefix) and not osp.isdir(prefix):
            where = 'is a file' if prefix == path else f'passes through the file {prefix}'
            raise NotADirectoryError(f'{option} {work_dir} {where}, not a folder: choose another {option} (or move '
                                     'the file away).')


def lock_work_dir(work_dir: str) -> str:
    """Create ``work_dir`` if needed and take its training lock for the life of this process (again: a no-op);
    returns the lock file's path. Raises :class:`WorkDirInUseError` naming the holder's pid when another live
    process holds it; nothing is written into the folder then. The path was checked before
    (:func:`check_work_dir`, by :func:`~sapiens2.engine.launch.prepare_train_config`)."""
    os.makedirs(work_dir, exist_ok=True)
    key = osp.realpath(work_dir)
    path = osp.join(work_dir, LOCK_NAME)
    if key in _HELD:
        return path
    if osp.isdir(path):
        raise IsADirectoryError(f'--work-dir {work_dir}: {path} is a folder, where training keeps its lock file; move '
                                'it away, or choose another --work-dir.')
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: held by a live process
        holder = _holder(fd)
        os.close(fd)
        raise WorkDirInUseError(
            f'--work-dir {work_dir} is in use by another training run ({holder}; lock {path}): two runs in one work '
            'directory replace each other\'s checkpoints and logs. Wait for that run to end or stop it, or choose '
            'another --work-dir.') from None
    os.ftruncate(fd, 0)
    os.write(fd, f'pid {os.getpid()} on {socket.gethostname()}\n'.encode())
    _HELD[key] = fd
    return path


def unlock_work_dir(work_dir: str) -> None:
    """Release the lock :func:`lock_work_dir` took in this process (the end of the process releases it too)."""
    fd: Optional[int] = _HELD.pop(osp.realpath(work_dir), None)
    if fd is not None:
        os.close(fd)


def _holder(fd: int) -> str:
    text = os.pread(fd, 200, 0).decode(errors='replace').strip()
    return text if text.startswith('pid ') else 'pid not recorded yet'


def claim_work_dir(work_dir: str, resume: bool = False) -> None:
    """:func:`lock_work_dir` and :func:`~sapiens2.engine.work_dir_record.claim_checkpoints` (``resume``: the run
    resumes) on rank 0 of a (possibly distributed) training run; when either fails, every rank raises the same
    error, so that no rank starts writing into a folder another run owns or over files training did not write."""
    from mmengine.dist import broadcast_object_list, get_rank, get_world_size

    from .work_dir_record import claim_checkpoints
    error: Optional[OSError] = None
    if get_rank() == 0:
        try:
            lock_work_dir(work_dir)
            claim_checkpoints(work_dir, resume)
        except OSError as err:
            if not isinstance(err, WorkDirInUseError):
                unlock_work_dir(work_dir)
            error = err
    if get_world_size() > 1:
        shared = [error]
        broadcast_object_list(shared, src=0)
        error = shared[0]
    if error is not None:
        raise error
