"""Outputs never replace an input, nor a file that sapiens2 did not write.

:class:`OutputGuard` is asked about each output path before it is written:

* a path that is an input file (the same file: by path, through a symbolic link, or a hard link) is refused, even
  with ``overwrite``;
* a symbolic link (or a path below a linked folder of the output folder) is refused, even with ``overwrite`` or
  when the manifest lists it: a write through it would change a file outside the output folder;
* an existing path is refused unless ``overwrite`` is set or the output folder's manifest
  (:data:`MANIFEST_NAME`, the files sapiens2 wrote into that folder) lists it, so that running a command again into
  its own folder works.

:meth:`OutputGuard.record` adds written paths to the manifest (rewritten atomically). Tasks name their raw files with
:meth:`~sapiens2.apis.tasks.base.BaseInferenceTask.out_path`, which passes them through :func:`checked`: the guard
:func:`guarding` made active in the writing thread checks them too, whatever suffix they have.
"""
import contextlib
import functools
import logging
import os
import os.path as osp
import re
import threading
import warnings
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, Optional, Set, Tuple

from sapiens2.utils.atomic_save import read_file_list, refuse_links, write_file_list
from sapiens2.utils.file_lock import exclusive, locked_update
from sapiens2.utils.output_paths import make_folder

if TYPE_CHECKING:
    from .output_plan import OutputPlan

#: The manifest of an output folder: a hidden JSON file listing the files sapiens2 wrote there.
MANIFEST_NAME = '.sapiens2_outputs.json'

logger = logging.getLogger(__name__)
_active = threading.local()


class OutputGuard:
    """Checks output paths under ``out_dir`` (see the module docstring).

    Args:
        out_dir: The output folder; its manifest is ``out_dir/.sapiens2_outputs.json``.
        inputs: Input files that no output may replace (more with :meth:`add_input`).
        overwrite: Replace existing files that sapiens2 did not write (never an input).
        option: The argument that chose ``out_dir``, named in the messages.
        overwrite_option: The argument that sets ``overwrite``, named in the messages (None: the tool has none).
        shared: Other processes (the ranks of a labelling job) write into ``out_dir`` at the same time: the manifest
            keeps the files they listed but have not written yet (it is not pruned of missing files).
    """

    def __init__(self, out_dir: str, inputs: Iterable[str] = (), overwrite: bool = False, option: str = '--out',
                 overwrite_option: Optional[str] = '--overwrite', shared: bool = False) -> None:
        self.out_dir, self.overwrite, self.option, self.shared = out_dir, overwrite, option, shared
        self.overwrite_option = overwrite_option
        self.manifest = osp.join(out_dir, MANIFEST_NAME)
        self._inputs: Dict[Tuple[int, int], str] = {}
        for path in inputs:
            self.add_input(path)
        self._owned: Set[str] = self._read_manifest()
        #: The run's output plan (:class:`~.output_plan.OutputPlan`), once made: a path it does not cover is refused.
        self.plan: Optional['OutputPlan'] = None

    def add_input(self, path: str) -> None:
        """Protect the input file ``path`` (a no-op for a path that is not a file)."""
        with contextlib.suppress(OSError):
            stat = os.stat(path)
            self._inputs.setdefault((stat.st_dev, stat.st_ino), path)

    def check(self, path: str) -> str:
        """Return ``path`` when it may be written; raise ``FileExistsError`` (one line) when it would replace an
        input, or an existing file that sapiens2 did not write there (unless ``overwrite``); raise
        ``LinkedOutputError`` (a ``FileExistsError``) when it, or a folder below the output folder, is a symbolic
        link, even with ``overwrite`` and when the manifest lists it."""
        refuse_links(path, self.out_dir, self.option)
        if self.plan is not None and not self.plan.covers(path):
            raise ValueError(f'{path} is not an output this run planned (a task writes a file that its raw_suffixes or '
                             'raw_patterns do not name); nothing was replaced')
        try:
            stat = os.stat(path)
        except OSError:  # nothing there (or nothing readable): nothing to replace
            return path
        source = self._inputs.get((stat.st_dev, stat.st_ino))
        if source is not None:
            raise FileExistsError(f'the output {path} is the input {source}: writing it would replace the input; '
                                  f'choose an {self.option} outside the input folders')
        if not self.overwrite and self._key(path) not in self._owned:
            remedy = (f'move it, choose another {self.option}, or pass {self.overwrite_option} to replace such files'
                      if self.overwrite_option else f'move it or choose another {self.option}')
            raise FileExistsError(f'{path} already exists and was not written by sapiens2 (it is not listed in '
                                  f'{self.manifest}); {remedy}')
        return path

    def record(self, paths: Iterable[str]) -> None:
        """Add ``paths`` to the manifest (merged with what other writers, e.g. other ranks or runs, listed meanwhile,
        under the manifest's lock: :func:`~sapiens2.utils.file_lock.locked_update`; listed files that no longer exist
        are dropped unless ``shared``: another rank may list a file before writing it); atomic. Nothing is written
        when ``paths`` is empty."""
        paths = list(paths)
        if not paths:
            return
        with locked_update(self.manifest):  # another run or rank may add its files meanwhile: none is lost
            owned = self._owned | self._read_manifest()
            if not self.shared:
                owned = {key for key in owned if osp.lexists(osp.join(self.out_dir, key))}
            owned.update(self._key(path) for path in paths)
            self._owned = owned
            write_file_list(self.manifest, 'sapiens2', owned)

    def _key(self, path: str) -> str:
        """``path`` relative to the output folder (symbolic links of folders resolved), with ``/``."""
        folder = osp.realpath(osp.dirname(osp.abspath(path)))
        relative = osp.relpath(osp.join(folder, osp.basename(path)), osp.realpath(self.out_dir))
        return relative.replace(os.sep, '/')

    def _read_manifest(self) -> Set[str]:
        try:
            return read_file_list(self.manifest)
        except ValueError as err:
            logger.warning('%s is not a readable sapiens2 manifest (%s): the files in %s count as not written by '
                           'sapiens2', self.manifest, err, self.out_dir)
            return set()


#: An array's output name in a listed path: ``array_<n>`` followed by a suffix (``pose/array_000003.png``).
ARRAY_NAME = re.compile(r'(?:^|/)array_(\d+)(?=[._/]|$)')


def next_array_number(out_dir: str) -> int:
    """The number after the highest ``array_<n>`` that ``out_dir``'s manifest lists (0 if none): the arrays of a
    later call into the folder are numbered on, so they never take an earlier call's array outputs."""
    try:
        listed = read_file_list(osp.join(out_dir, MANIFEST_NAME))
    except ValueError:
        return 0
    numbers = [int(found.group(1)) for found in map(ARRAY_NAME.search, listed) if found]
    return max(numbers) + 1 if numbers else 0


#: The lock file of a run writing into an output folder (:func:`writing_into`).
RUN_LOCK_NAME = '.sapiens2_run.lock'


class OutputFolderBusyNotice(UserWarning):
    """Another sapiens2 run writes into the output folder: this one waits for it."""


@contextlib.contextmanager
def writing_into(out_dir: str, option: str = '--out') -> Iterator[None]:
    """Hold ``out_dir``'s run lock in the block (created with the folder when missing; an empty folder this call
    created is removed again when the block fails): two runs into one folder would interleave their outputs (an
    export's manifest and model from two models, two runs' records of one name), so the second waits for the first,
    saying so in one line (:class:`OutputFolderBusyNotice`). A killed run releases it."""
    created = not osp.isdir(out_dir)
    make_folder(out_dir, option)
    try:
        with exclusive(osp.join(out_dir, RUN_LOCK_NAME), on_wait=functools.partial(_say_busy, out_dir)):
            yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(out_dir)  # only when still empty
        raise


def _say_busy(out_dir: str, holder: str) -> None:
    warnings.warn(OutputFolderBusyNotice(f'{out_dir} is being written by another sapiens2 run ({holder}); waiting for '
                                         'it to end'), stacklevel=5)


@contextlib.contextmanager
def guarding(guard: Optional[OutputGuard]) -> Iterator[None]:
    """Make ``guard`` check the paths passed to :func:`checked` in this thread (``None``: no check)."""
    previous = getattr(_active, 'guard', None)
    _active.guard = guard
    try:
        yield
    finally:
        _active.guard = previous


def checked(path: str) -> str:
    """``path``, after the check of the guard active in this thread (see :func:`guarding`), if any."""
    guard = getattr(_active, 'guard', None)
    return path if guard is None else guard.check(path)
