"""The class ids of every label map of a dataset, read once: the data check reads every map before training, and a
rerun (or the next run on the same data) reads only the maps that changed.

The cache is one JSON file, ``$SAPIENS2_CACHE_DIR/label_ids.json`` (default ``~/.cache/sapiens2``), keyed by the
absolute path of a map and checked against its modification time and size; a cache that cannot be read or written
is ignored (it only saves time). Maps are decoded by :func:`~sapiens2.datasets.seg.load_seg_annotations.
decode_label_map`, the reader training uses, so a damaged or colour map is named here as it would be there.
"""
import json
import os
import os.path as osp
from typing import List, Optional, Tuple

import numpy as np

from sapiens2.utils.atomic_save import atomic_write_text


def cache_dir() -> str:
    """``$SAPIENS2_CACHE_DIR``, else ``~/.cache/sapiens2``."""
    return osp.expanduser(os.environ.get('SAPIENS2_CACHE_DIR', '~/.cache/sapiens2'))


#: New entries after which the cache is saved during a check (a killed first check of a large dataset resumes).
SAVE_EVERY = 2000


class LabelIdCache:
    """``label_ids(path)`` -> (height, width, ids) and ``image_size(path)`` -> (height, width), from the cache when
    the file is unchanged; used as a context manager, the new entries are saved on exit."""

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = path or osp.join(cache_dir(), 'label_ids.json')
        self._entries = {}
        self._changed = False
        self._new = 0
        try:
            with open(self.path) as f:
                self._entries = dict(json.load(f))
        except (OSError, ValueError, TypeError):
            pass

    def label_ids(self, path: str) -> Tuple[int, int, List[int]]:
        """The height, width and sorted class ids of the label map ``path``."""
        entry = self._lookup(path, 'ids')
        if entry is None:
            from sapiens2.datasets.seg.load_seg_annotations import decode_label_map  # needs mmseg
            with open(path, 'rb') as f:
                labels = decode_label_map(f.read(), path)
            ids = np.flatnonzero(np.bincount(labels.ravel(), minlength=256)).tolist()
            entry = self._store(path, 'ids', [*labels.shape[:2], ids])
        height, width, ids = entry
        return int(height), int(width), [int(i) for i in ids]

    def image_size(self, path: str) -> Tuple[int, int]:
        """The height and width of the image ``path`` (its header only)."""
        entry = self._lookup(path, 'size')
        if entry is None:
            from PIL import Image
            with Image.open(path) as image:
                entry = self._store(path, 'size', [image.height, image.width])
        return int(entry[0]), int(entry[1])

    def _stamp(self, path: str) -> List[int]:
        stat = os.stat(path)
        return [stat.st_mtime_ns, stat.st_size]

    def _lookup(self, path: str, kind: str):
        entry = self._entries.get(f'{kind}:{osp.abspath(path)}')
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == self._stamp(path):
            return entry[1]
        return None

    def _store(self, path: str, kind: str, value):
        self._entries[f'{kind}:{osp.abspath(path)}'] = [self._stamp(path), value]
        self._changed = True
        self._new += 1
        if self._new % SAVE_EVERY == 0:  # a long first check that is killed keeps what it read
            self.save()
        return value

    def save(self) -> None:
        if not self._changed:
            return
        try:
            atomic_write_text(self.path, json.dumps(self._entries, separators=(',', ':')))
            self._changed = False
        except OSError:  # a read-only home, a full disk: the next run reads the maps again
            pass

    def __enter__(self) -> 'LabelIdCache':
        return self

    def __exit__(self, *exc) -> None:
        self.save()
