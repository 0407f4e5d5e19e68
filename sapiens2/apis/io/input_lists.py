"""Inputs at scale: text files that list inputs, and glob patterns, expanded into the paths they name.

* a ``.txt`` file lists one input per line (image, video, folder; blank lines and lines starting with ``#`` are
  skipped; a relative path is relative to the list file's folder), in its order;
* a pattern with ``*``, ``?`` or ``[`` that is not an existing path is expanded with :func:`glob.glob` (``**``
  matches sub-folders), sorted.

Everything else passes through unchanged (:func:`~sapiens2.apis.io.sources.collect_sources` reads it).
"""
import glob
import os.path as osp
from typing import List, Sequence

LIST_EXTENSIONS = ('.txt', )
GLOB_CHARS = frozenset('*?[')


def expand_inputs(inputs: Sequence[str]) -> List[str]:
    """The paths ``inputs`` name, with list files and glob patterns expanded (see the module docstring); a list file
    that names a missing file, or a pattern that matches nothing, is one ``ValueError``/``FileNotFoundError`` line."""
    expanded: List[str] = []
    for item in inputs:
        if not isinstance(item, str):
            expanded.append(item)
        elif osp.splitext(item)[1].lower() in LIST_EXTENSIONS and osp.isfile(item):
            expanded += _listed(item)
        elif GLOB_CHARS & set(item) and not osp.exists(item):
            matches = sorted(glob.glob(item, recursive=True))
            if not matches:
                raise FileNotFoundError(f'input pattern {item!r} matches no file; check the pattern (** for '
                                        'sub-folders; quote it so that the shell leaves it to sapiens2)')
            expanded += matches
        else:
            expanded.append(item)
    return expanded


def _listed(list_file: str) -> List[str]:
    folder = osp.dirname(list_file)
    paths = []
    with open(list_file, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            path = line if osp.isabs(line) or '://' in line else osp.join(folder, line)
            if not osp.exists(path) and '://' not in line:
                raise FileNotFoundError(f'{list_file}, line {number}: {line} does not exist (relative paths are '
                                        f'relative to the list file\'s folder {folder or "."}); fix or drop the line')
            paths.append(path)
    if not paths:
        raise ValueError(f'input list {list_file} names no input (one path per line); give a list with paths')
    return paths
