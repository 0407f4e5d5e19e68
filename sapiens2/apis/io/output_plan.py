"""Every path a run writes, decided before it writes anything: the run's output plan.

The result writer claims each output of a run (:class:`OutputPlan`), saying whose it is (the task, the input, what
the file is), before the first file is written:

* a path: a picture, a JSON record, a raw file, an index;
* a family of paths, for files whose number is known only when the frame runs: the per-person crops
  ``people/a_person<k>_seg.png``, a video's frame files ``seg/v/v_<frame>_seg.npy``. A family is a path prefix
  (``people/a``), a pattern of what follows it and an example of it.

:meth:`OutputPlan.check` then refuses, in one ``ValueError`` line naming both outputs and their inputs, any two
claims that can be one file: equal paths (compared case-insensitively, as on macOS and Windows disks), a path that
a family can produce (the picture of an input named ``a_person0_seg`` is a crop of input ``a``), two families that
can produce one name (tried on each other's examples), and a file where another output needs a folder. At write
time :meth:`OutputPlan.covers` tells whether a path was planned, so a file the plan did not foresee is refused
before it is written, not found replaced afterwards.
"""
import os.path as osp
import re
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Tuple


@dataclass(frozen=True)
class Family:
    """Paths ``stem + rest`` for every ``rest`` that ``pattern`` (a regular expression) matches in full."""
    stem: str
    pattern: str
    example: str  # a ``rest`` that the pattern matches, tried against the other claims


class OutputPlan:
    """The outputs of one run (see the module docstring). ``owner`` strings say whose an output is, e.g.
    ``'the seg raw files of input a (photos/a.png)'``."""

    def __init__(self) -> None:
        self._paths: Dict[str, Tuple[str, str]] = {}  # key -> (path, owner)
        self._families: Dict[str, List[Tuple[Family, 're.Pattern', str]]] = {}  # stem key -> (family, regex, owner)

    def claim(self, path: str, owner: str) -> None:
        """Plan ``path`` for ``owner`` (a second identical claim is one claim; a second owner is refused)."""
        key = _key(path)
        if key in self._paths and self._paths[key][1] != owner:
            _refuse(path, self._paths[key][1], owner)
        self._paths[key] = (path, owner)

    def claim_family(self, family: Family, owner: str) -> None:
        """Plan the paths of ``family`` for ``owner``."""
        regex = re.compile(family.pattern, re.IGNORECASE)
        if not regex.fullmatch(family.example):
            raise ValueError(f'output family {family}: its example does not match its pattern')
        entries = self._families.setdefault(_key(family.stem), [])
        if all(entry[0] != family or entry[2] != owner for entry in entries):
            entries.append((family, regex, owner))

    def check(self) -> None:
        """Refuse (``ValueError``, one line) two claims that can name one file (see the module docstring)."""
        folders: Dict[str, str] = {}  # folder key -> the owner of a path below it
        for key, (_, owner) in self._paths.items():
            for folder in _folders(key):
                folders.setdefault(folder, owner)
        for key, (path, owner) in self._paths.items():
            if key in folders:
                _refuse(path, folders[key], owner, as_folder=True)
            found = self._family_of(key)
            if found is not None:
                _refuse(path, found[1], owner)
        for entries in self._families.values():
            for family, _, owner in entries:
                example = family.stem + family.example
                found = self._family_of(_key(example), skip=(family, owner))
                if found is not None:
                    _refuse(example, found[1], owner)

    def covers(self, path: str) -> bool:
        """Whether ``path`` was planned (claimed, or produced by a claimed family)."""
        key = _key(path)
        return key in self._paths or self._family_of(key) is not None

    def paths(self) -> List[str]:
        """The claimed paths, in claim order."""
        return [path for path, _ in self._paths.values()]

    def families(self) -> Iterator[Family]:
        for entries in self._families.values():
            for family, _, _ in entries:
                yield family

    def _family_of(self, key: str, skip: Optional[Tuple[Family, str]] = None) -> Optional[Tuple[Family, str]]:
        """A claimed family (and its owner) that produces the path of ``key``, other than ``skip``."""
        start = len(osp.dirname(key)) + 1  # families name files of one folder: their stems end inside the file name
        for end in range(start, len(key) + 1):
            for family, regex, owner in self._families.get(key[:end], ()):
                if (family, owner) != skip and regex.fullmatch(key[end:]):
                    return family, owner
        return None


def plan_owner(what: str, task: str, source_name: str, source_path: Optional[str]) -> str:
    """The owner of an output, in words: ``'the pose picture of input a (photos/a.png)'``."""
    where = f' ({source_path})' if source_path else ''
    return f'the {task} {what} of input {source_name}{where}'


def _key(path: str) -> str:
    return osp.normcase(osp.abspath(path)).casefold()


def _folders(key: str) -> Iterable[str]:
    """The folders above ``key`` (not the root)."""
    folder = osp.dirname(key)
    while folder and osp.dirname(folder) != folder:
        yield folder
        folder = osp.dirname(folder)


def _refuse(path: str, first: str, second: str, as_folder: bool = False) -> None:
    first += ' (as a folder)' if as_folder else ''
    raise ValueError(f'two outputs of this run are named {path}: {first} and {second}; rename one of these inputs '
                     '(nothing was written)')
