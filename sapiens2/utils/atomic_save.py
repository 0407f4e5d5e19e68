"""The one way sapiens2 writes a file: atomically, and never through a symbolic link.

A killed save never leaves a truncated file, and a write never changes a file that a link at the output path (or a
linked folder below the output folder) points to: :func:`refuse_links` refuses such a path with one line, even with
``--overwrite``, and the final ``os.replace`` would replace a link, never its target. Writers use
:func:`atomic_write_bytes` / :func:`atomic_write_text` / :func:`open_atomic` for their bytes, :class:`AtomicOutput`
for libraries that write by path (``cv2.VideoWriter``, ``np.save``, ``torch.save``...: they write ``out.tmp``), and
:func:`open_fresh` for streams that must be readable while written (logs, JSON Lines).
tests/engine/test_single_writer.py fails when a write appears elsewhere.

Every checkpoint MMEngine writes (``Runner.save_checkpoint``, the strategies, ``CheckpointHook``) goes through
``get_file_backend(path).put(bytes, path)``. :mod:`sapiens2.adaptations` registers
:class:`~sapiens2.engine.work_dir_backend.AtomicLocalBackend` as the backend for local paths: it writes to a temporary
file in the same folder, fsyncs it, then ``os.replace``s it over the target, so the target is either the previous
complete file or the new complete file. The new file gets the permissions ``open(path, 'w')`` would give it: those of
the file it replaces, else 0o666 less the umask. In a training work dir, it never writes over or removes a checkpoint-
named file that training did not write there (:mod:`sapiens2.engine.work_dir_record`).
"""
import contextlib
import errno
import glob
import io
import json
import os
import shutil
import socket
import stat
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterable, Iterator, Optional, Set

CHECKPOINT_SUFFIXES = ('.pth', '.safetensors')
#: Held while a file is written: whoever must end the process mid-run takes it first, so no write is left half-done
#: (:mod:`sapiens2.engine.dist.agent_watchdog`).
WRITE_LOCK = threading.RLock()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + ``os.replace``), creating parent folders; a
    symbolic link there is refused (:func:`refuse_links`), a device or pipe (``/dev/null``) is written into.

    Temporary files of earlier writes of ``path`` on this host whose process is gone (killed before committing)
    are removed first; concurrent writers of the same path (MMEngine dumps some logs on every rank) are left alone.
    A full disk (or quota) raises ``OSError(ENOSPC)`` saying which file, that the previous one is intact, and how
    much space is needed.
    """
    path = os.fspath(path)
    refuse_links(path)
    if is_special_file(path):
        with open(path, 'wb') as f:
            f.write(data)
        return
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
            if disk_full_cause(err) is None:
                raise
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise disk_full_error(path, len(data), existed, err) from err
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        _fsync_dir(folder)


class LinkedOutputError(FileExistsError):
    """A write would go through a symbolic link."""


def refuse_links(path: str | Path, root: Optional[str | Path] = None, option: str = 'output folder') -> None:
    """Raise :class:`LinkedOutputError` (one line: the link, where it points, the fix) when ``path`` is a symbolic
    link or, with ``root`` (the output folder, which may itself be a link), a folder between ``root`` and ``path``
    is one: writing there would change a file outside the output folder."""
    path = os.path.abspath(os.fspath(path))
    links = [path]
    if root is not None:
        relative = os.path.relpath(path, os.path.abspath(os.fspath(root)))
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            folder = os.path.abspath(os.fspath(root))
            for part in relative.split(os.sep)[:-1]:
                folder = os.path.join(folder, part)
                links.insert(-1, folder)
    for link in links:
        if os.path.islink(link):
            where = (f'the output {path} is a symbolic link' if link == path else
                     f'the output {path} is below {link}, a symbolic link')
            raise LinkedOutputError(
                f'{where} to {os.readlink(link)}: sapiens2 never writes through a link '
                f'(even with --overwrite), as that would change a file outside the {option}; remove the link (or '
                f'choose another {option}) and run again')


def is_special_file(path: str | Path) -> bool:
    """Whether ``path`` is a device, pipe or socket (``/dev/null``, ``/dev/stdout``): written into, never replaced."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def create_temporary(path: str, keep_suffix: bool = False) -> str:
    """Create the (empty) temporary file of an atomic write of ``path``, beside it, with the permissions
    ``open(path, 'w')`` would give ``path``: those of the file it replaces, else 0o666 less the umask. Temporary files
    of earlier writes whose process is gone are removed first. ``keep_suffix``: the name ends with ``path``'s
    suffix, for writers that choose the format by it."""
    folder = os.path.dirname(path) or '.'
    os.makedirs(folder, exist_ok=True)
    prefix = f'.{os.path.basename(path)}.{socket.gethostname()}.'
    _remove_dead_writers_files(folder, prefix)
    suffix = os.path.splitext(path)[1] if keep_suffix else ''
    tmp = os.path.join(folder, f'{prefix}{os.getpid()}.tmp{suffix}')
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the kernel applies the umask
    with contextlib.suppress(OSError):
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
    return tmp


def disk_full_cause(err: Optional[BaseException]) -> Optional[OSError]:
    """The full disk or exhausted quota (``OSError`` ``ENOSPC``/``EDQUOT``) that ``err`` is or was raised from (a
    library may wrap it: torch's ONNX exporter does); None when it is none."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def disk_full_error(path: str, size: int, existed: bool, err: OSError, partial: bool = False,
                    kept: Optional[str] = None) -> OSError:
    """The one error of a write that filled the disk: ``OSError`` (its errno) naming ``path``, the space it needs
    (``size``; with ``partial``, the bytes written before the disk filled: it needs more), the space free and what
    is left (``kept``; default: the previous file is intact, or none was written, and the temporary file is gone)."""
    return OSError(err.errno, _disk_full_message(path, size, existed, err, partial, kept))


def _disk_full_message(path: str, size: int, existed: bool, err: OSError, partial: bool = False,
                       kept: Optional[str] = None) -> str:
    from sapiens2.engine.checkpoint.integrity import (
        newest_complete_checkpoint,  # here: this file also runs alone (its kill test)
    )
    folder = os.path.dirname(path) or '.'
    free = shutil.disk_usage(folder).free
    if kept is None:
        kept = (f'the previous {os.path.basename(path)} is intact' if existed else
                f'no {os.path.basename(path)} was written')
        earlier, _ = newest_complete_checkpoint(folder, exclude=path)
        if earlier and path.endswith(CHECKPOINT_SUFFIXES):
            kept += (f', and the newest complete checkpoint there is {os.path.basename(earlier)} (--resume continues '
                     'from it)')
        kept += '; the partial temporary file was removed'
    needs = f'it needed more than the {_human(size)} written when the disk filled' if partial else \
        f'it needs {_human(size)}'
    free_at_least = f'more than {_human(size)}' if partial else f'at least {_human(max(size - free, 0) or size)}'
    hint = ('delete old checkpoints, lower max_keep_ckpts, or choose another --work-dir' if
            path.endswith(CHECKPOINT_SUFFIXES) else 'or choose another output folder')
    return (f'{err.strerror or os.strerror(err.errno)} while writing {path}: {needs} and {folder} has {_human(free)} '
            f'free. Nothing was replaced: {kept}. Free {free_at_least} there ({hint}), then run again.')


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _human(size: float) -> str:
    for unit in ('bytes', 'KiB', 'MiB', 'GiB'):
        if size < 1024:
            return f'{size:.0f} {unit}' if unit == 'bytes' else f'{size:.1f} {unit}'
        size /= 1024
    return f'{size:.1f} TiB'


def _remove_dead_writers_files(folder: str, prefix: str) -> None:
    for stale in glob.glob(os.path.join(glob.escape(folder), f'{glob.escape(prefix)}*.tmp*')):
        pid = stale[len(os.path.join(folder, prefix)):].split('.tmp')[0]
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


def atomic_write_text(path: str | Path, text: str, encoding: str = 'utf-8') -> None:
    """:func:`atomic_write_bytes` of ``text``."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_save_npy(path: str | Path, array) -> None:
    """``numpy.save(path, array)`` through :func:`atomic_write_bytes` (``path`` keeps its name: no ``.npy`` added)."""
    import numpy as np
    buffer = io.BytesIO()
    np.save(buffer, array)
    atomic_write_bytes(path, buffer.getvalue())


def atomic_copy(src: str | Path, dst: str | Path) -> str:
    """Copy the file ``src`` to ``dst`` (atomically, never through a link); returns ``dst``."""
    with AtomicOutput(dst) as out:
        shutil.copyfile(src, out.tmp)
    return os.fspath(dst)


class AtomicOutput:
    """A file written under a temporary name beside ``path`` (with its suffix: writers that choose the format by it
    work), e.g. by a library that writes by path (``cv2.VideoWriter(out.tmp, ...)``, ``np.save(out.tmp, ...)``).
    :meth:`commit` moves it over ``path`` (``os.replace``: atomic; a link there is replaced, never its target);
    :meth:`discard` removes it. As a context manager: commit after a clean exit, discard after an error.
    ``path`` (and, with ``root``, a folder below ``root``) being a link is refused (:func:`refuse_links`)."""

    def __init__(self, path: str | Path, root: Optional[str | Path] = None) -> None:
        self.path = os.fspath(path)
        refuse_links(self.path, root)
        self._direct = is_special_file(self.path)  # a device or pipe: written into, never replaced
        self.tmp = self.path if self._direct else create_temporary(self.path, keep_suffix=True)
        self._mode = stat.S_IMODE(os.stat(self.tmp).st_mode)  # some writers (safetensors) recreate it as 0600
        self._file: Optional[IO] = None

    def open(self, mode: str = 'w', encoding: Optional[str] = None) -> IO:
        """The temporary file, opened for writing (closed by :meth:`commit` / :meth:`discard`)."""
        self._file = open(self.tmp, mode, encoding=encoding if 'b' in mode else encoding or 'utf-8')
        return self._file

    def commit(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._direct:
            return
        with WRITE_LOCK:
            if not os.path.exists(self.tmp):
                raise OSError(f'cannot write {self.path}: the writer left nothing in its temporary file {self.tmp}')
            refuse_links(self.path)  # a link made while the file was written
            with contextlib.suppress(OSError):
                os.chmod(self.tmp, self._mode)
            os.replace(self.tmp, self.path)
        _fsync_dir(os.path.dirname(self.path) or '.')

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._direct:
            return
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.tmp)

    def __enter__(self) -> 'AtomicOutput':
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            self.commit()
            return
        written = _size(self.tmp)
        self.discard()
        full = disk_full_cause(exc)
        if full is not None and not self._direct:  # the writer filled the disk: say which file, and how much
            raise disk_full_error(self.path, written, os.path.exists(self.path), full, partial=True) from exc


@contextlib.contextmanager
def open_atomic(path: str | Path, mode: str = 'w', encoding: Optional[str] = None,
                root: Optional[str | Path] = None) -> Iterator[IO]:
    """``open(path, mode)`` for writing whose content replaces ``path`` atomically after a clean ``with`` block
    (:class:`AtomicOutput`); after an error ``path`` is left as it was."""
    with AtomicOutput(path, root) as out:
        yield out.open(mode, encoding)


@contextlib.contextmanager
def atomic_output_with_siblings(path: str | Path) -> Iterator[str]:
    """A temporary path with ``path``'s name, in a temporary folder beside it, for a writer that also writes files
    named after it (ONNX's external ``<name>.data``). After a clean ``with`` block every file the writer left there
    replaces its namesake beside ``path``, ``path`` itself last (each move atomic; links refused); after an error
    nothing beside ``path`` changes."""
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    refuse_links(path)
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f'.{name}.', suffix='.tmp', dir=folder)
    try:
        try:
            yield os.path.join(work, name)
        except Exception as err:
            full = disk_full_cause(err)
            if full is None:
                raise
            written = sum(_size(os.path.join(work, other)) for other in os.listdir(work))
            raise disk_full_error(path, written, os.path.exists(path), full, partial=True) from err
        names = sorted(os.listdir(work), key=lambda n: n == name)
        for other in names:
            refuse_links(os.path.join(folder, other))
        with WRITE_LOCK:
            for other in names:
                os.replace(os.path.join(work, other), os.path.join(folder, other))
        _fsync_dir(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def open_fresh(path: str | Path, mode: str = 'w', root: Optional[str | Path] = None) -> IO:
    """A new file at ``path`` for a stream that must be readable while written (a log, JSON Lines): a link there is
    refused (:func:`refuse_links`); an existing file is unlinked first, so a hard link's other names keep their
    content; the file is created with ``O_EXCL | O_NOFOLLOW``. A device or pipe is written into."""
    path = os.fspath(path)
    refuse_links(path, root)
    if is_special_file(path):
        return open(path, mode, **({} if 'b' in mode else {'encoding': 'utf-8'}))
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0), 0o666)
    return os.fdopen(fd, mode, **({} if 'b' in mode else {'encoding': 'utf-8'}))


def read_file_list(path: str | Path) -> Set[str]:
    """The ``files`` of a list of the files sapiens2 wrote into a folder (an output folder's manifest, a work dir's
    checkpoint record; :func:`write_file_list`); empty where there is none, ``ValueError`` naming the problem for a
    file that is no such list."""
    if not os.path.exists(path):
        return set()
    try:
        with open(path) as f:
            return set(json.load(f)['files'])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(str(err) or type(err).__name__) from err


def write_file_list(path: str | Path, written_by: str, files: Iterable[str]) -> None:
    """Write the list :func:`read_file_list` reads, atomically."""
    atomic_write_text(path, json.dumps(dict(written_by=written_by, files=sorted(files)), indent=0) + '\n')
