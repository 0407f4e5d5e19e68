"""Locks between processes (and threads) that write into one folder: ``fcntl.flock`` on a hidden lock file.

Two runs into one output folder, or two exports into one bundle folder, would interleave their files; two writers of
a shared index (an output folder's manifest, ``people/coco_results.json``) would each read it, add their entries and
replace it, losing the other's. :func:`exclusive` serialises them: the second waits, saying for whom in one line
(``on_wait``). The lock is the open lock file's: the system releases it when its holder exits, killed or not, so a
killed run never blocks the next one. The lock file is removed on release (its holder unlinks it while holding it;
a waiter that then gets a removed file takes the lock again on the new one), so folders keep no lock files, except one
left by a killed holder, which the next holder removes. Where ``fcntl`` does not exist (Windows) nothing is locked.
"""
import contextlib
import os
import os.path as osp
from typing import Callable, Iterator, Optional

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None


def lock_path(path: str) -> str:
    """The lock file guarding the file ``path``: ``.<name>.lock`` beside it."""
    folder, name = osp.split(osp.abspath(path))
    return osp.join(folder, f'.{name}.lock')


@contextlib.contextmanager
def locked_update(path: str) -> Iterator[None]:
    """Hold the lock of the file ``path`` (:func:`lock_path`) around a read-modify-write of it."""
    with exclusive(lock_path(path)):
        yield


@contextlib.contextmanager
def exclusive(lock: str, on_wait: Optional[Callable[[str], None]] = None) -> Iterator[None]:
    """Hold the lock file ``lock`` (created, in an existing folder) in the block; when another process or thread
    holds it, call ``on_wait(holder)`` once (``holder``: what the holder wrote in the lock file, e.g. ``pid 1234``)
    and wait. Not re-entrant: a thread that holds a lock file must not ask for it again."""
    if fcntl is None:
        yield
        return
    fd = _acquire(lock, on_wait)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)  # while holding it: a waiter on this file takes the lock on a new file (_acquire)
        os.close(fd)


def _acquire(lock: str, on_wait: Optional[Callable[[str], None]]) -> int:
    waited = False
    os.makedirs(osp.dirname(lock) or '.', exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0), 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None and not waited:
                    on_wait(_holder(fd))
                waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, lock):  # not removed by the previous holder meanwhile
                os.ftruncate(fd, 0)
                os.write(fd, f'pid {os.getpid()}\n'.encode())
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _same_file(fd: int, path: str) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError):
        text = os.pread(fd, 100, 0).decode(errors='replace').strip()
        if text:
            return text
    return 'another process'
