"""Read an own layout from one metainfo file: mmpose's ``dataset_info`` file for keypoints, the same form for parts.

A metainfo file is a Python file holding ``dataset_info = dict(...)``: for keypoints mmpose's format
(``keypoint_info``, ``skeleton_info``, ``joint_weights``, ``sigmas``; mmpose reads it through
``metainfo=dict(from_file=...)``), for body parts (mmseg has no ``from_file``) ``classes``, optional ``palette`` (RGB,
one per class), optional ``flip_pairs`` (left/right classes a horizontal flip swaps, as names or ids) and optional
``class_weight`` (cross-entropy weights, one per class). docs/custom_data.md shows both.
"""
import os.path as osp
from typing import List, Optional, Sequence

from mmengine.config import Config

PACKAGE_PREFIXES = ('sapiens2::', 'mmpose::')


class LayoutFileError(ValueError):
    """A metainfo file that is missing or does not describe a layout."""


def find_layout_file(path: str, config_file: Optional[str] = None) -> str:
    """The absolute path of a metainfo file given as ``sapiens2::<config path>``, ``mmpose::<config path>``, a path
    that exists from the working directory, or a path relative to the folder of ``config_file``."""
    if path.startswith('sapiens2::'):
        from sapiens2.config_files import config_path
        return osp.abspath(config_path(path))
    if path.startswith('mmpose::'):
        import mmpose
        packaged = osp.join(osp.dirname(mmpose.__file__), '.mim', 'configs', path[len('mmpose::'):])
        if not osp.isfile(packaged):
            raise LayoutFileError(f'custom_metainfo {path!r}: mmpose ships no such file ({packaged}).')
        return packaged
    candidates = [path] + ([osp.join(osp.dirname(osp.abspath(config_file)), path)] if config_file else [])
    for candidate in candidates:
        if osp.isfile(candidate):
            return osp.abspath(candidate)
    where = f' or next to the config {config_file}' if config_file else ''
    raise LayoutFileError(f'custom_metainfo {path!r}: no such file in the working directory{where}; give the path of '
                          'your metainfo file (docs/custom_data.md).')


def read_dataset_info(path: str) -> dict:
    """The ``dataset_info`` dict of a metainfo file."""
    try:
        info = Config.fromfile(path).get('dataset_info')
    except Exception as err:  # a syntax error or a missing base: say which file
        raise LayoutFileError(f'{path}: cannot read the metainfo file ({type(err).__name__}: {err}).') from err
    if not isinstance(info, dict):
        raise LayoutFileError(f'{path}: a metainfo file defines `dataset_info = dict(...)` (docs/custom_data.md).')
    return info.to_dict() if hasattr(info, 'to_dict') else dict(info)


def num_keypoints(path: str) -> int:
    """The number of keypoints of an mmpose keypoint metainfo file."""
    info = read_dataset_info(path)
    keypoints = info.get('keypoint_info')
    if not keypoints:
        raise LayoutFileError(f'{path}: dataset_info has no keypoint_info; a keypoint metainfo file follows mmpose\'s '
                              'format (keypoint_info, skeleton_info, joint_weights, sigmas).')
    sigmas = info.get('sigmas')
    if sigmas is not None and len(sigmas) != len(keypoints):
        raise LayoutFileError(f'{path}: {len(sigmas)} sigmas for {len(keypoints)} keypoints; give one per keypoint.')
    return len(keypoints)


def read_parts_metainfo(path: str) -> dict:
    """The mmseg dataset metainfo of a body-part metainfo file: ``classes``, ``palette`` (when given), ``flip_pairs``
    (id pairs, empty when none) and ``class_weight`` (when given)."""
    info = read_dataset_info(path)
    classes = info.get('classes')
    if not classes or not all(isinstance(name, str) for name in classes):
        raise LayoutFileError(f'{path}: dataset_info needs `classes`, a list of class names (0 = the first).')
    classes = tuple(classes)
    meta = dict(classes=classes, flip_pairs=_flip_pairs(path, info.get('flip_pairs') or [], classes))
    for key in ('palette', 'class_weight'):
        values = info.get(key)
        if values is None:
            continue
        if len(values) != len(classes):
            raise LayoutFileError(f'{path}: {len(values)} entries in {key} for {len(classes)} classes; give one per '
                                  'class.')
        meta[key] = [list(v) for v in values] if key == 'palette' else [float(v) for v in values]
    return meta


def _flip_pairs(path: str, pairs: Sequence, classes: Sequence[str]) -> List[List[int]]:
    """The id pairs of the file's ``flip_pairs`` (names or ids; none when it has none: nothing is derived from the
    class names), read by :func:`~sapiens2.datasets.seg.flip_pairs.seg_flip_pairs`."""
    from sapiens2.datasets.seg.flip_pairs import seg_flip_pairs  # the datasets package imports this one's package
    try:
        return [list(pair) for pair in seg_flip_pairs(dict(classes=classes, flip_pairs=list(pairs)))]
    except ValueError as err:
        raise LayoutFileError(f'{path}: {err}.') from None
