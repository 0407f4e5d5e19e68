"""Read an own layout from one metainfo file: mmpose's ``dataset_info`` file for keypoints, the same form for parts.

A metainfo file is a Python file holding ``dataset_info = dict(...)``: for keypoints mmpose's format
(``keypoint_info``, ``skeleton_info``, ``joint_weights``, ``sigmas``; mmpose reads it through
``metainfo=dict(from_file=...)``), for body parts (mmseg has no ``from_file``) ``classes``, optional ``palette`` (RGB,
one per class), optional ``flip_pairs`` (left/right classes a horizontal flip swaps, as names or ids) and optional
``class_weight`` (cross-entropy weights, one per class). docs/custom_data.md shows both.

Each file is checked once, where it is read: a wrong name, id, colour or weight is one :class:`LayoutFileError`
naming the file, the field, the value and the known names (mmpose would stop later on a bare ``KeyError``, an
``OverflowError`` or an ``IndexError`` while drawing).
"""
import difflib
import math
import os.path as osp
from typing import Iterable, List, Mapping, Optional, Sequence

from mmengine.config import Config

from sapiens2.metainfo.seg_flip_pairs import seg_flip_pairs

from .packaged import config_path

PACKAGE_PREFIXES = ('sapiens2::', 'mmpose::')


class LayoutFileError(ValueError):
    """A metainfo file that is missing or does not describe a layout."""


def find_layout_file(path: str, config_file: Optional[str] = None) -> str:
    """The absolute path of a metainfo file given as ``sapiens2::<config path>``, ``mmpose::<config path>``, a path
    that exists from the working directory, or a path relative to the folder of ``config_file``."""
    if path.startswith('sapiens2::'):
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
    except LayoutFileError:
        raise
    except Exception as err:  # a syntax error or a missing base: say which file
        raise LayoutFileError(f'{path}: cannot read the metainfo file ({type(err).__name__}: {err}).') from err
    if not isinstance(info, dict):
        raise LayoutFileError(f'{path}: a metainfo file defines `dataset_info = dict(...)` (docs/custom_data.md).')
    return info.to_dict() if hasattr(info, 'to_dict') else dict(info)


def num_keypoints(path: str) -> int:
    """The number of keypoints of an mmpose keypoint metainfo file (checked: :func:`check_keypoint_file`)."""
    info = read_dataset_info(path)
    keypoints = info.get('keypoint_info')
    if not isinstance(keypoints, Mapping) or not keypoints:
        raise LayoutFileError(f'{path}: dataset_info has no keypoint_info; a keypoint metainfo file follows mmpose\'s '
                              'format (keypoint_info, skeleton_info, joint_weights, sigmas).')
    check_keypoint_file(path, info)
    return len(keypoints)


def check_keypoint_file(path: str, info) -> None:
    """:func:`check_keypoint_info` of a file's ``dataset_info`` when it has a ``keypoint_info`` mapping, unless mmpose
    ships the file (some of mmpose's own files have one-sided swaps or ids out of order, which it tolerates). Run on
    every config file MMEngine reads (an adaptation), so mmpose's ``from_file`` reads are checked too."""
    if isinstance(info, Mapping) and isinstance(info.get('keypoint_info'), Mapping) and not _shipped_by_mmpose(path):
        check_keypoint_info(path, info)


def _shipped_by_mmpose(path: str) -> bool:
    import mmpose
    return osp.abspath(path).startswith(osp.join(osp.dirname(osp.abspath(mmpose.__file__)), ''))


def check_keypoint_info(path: str, info: Mapping) -> None:
    """Raise :class:`LayoutFileError` for what mmpose's ``parse_pose_metainfo`` and its drawing would trip on, in a
    ``dataset_info`` with a ``keypoint_info`` mapping: ids that are not 0..K-1, repeated names, ``swap`` partners or
    skeleton links naming no keypoint, one-sided swaps, colours outside 0-255, per-keypoint lists of another length,
    sigmas that are not positive."""
    keypoints = info['keypoint_info']
    names = []
    for key, point in keypoints.items():
        field = f'keypoint_info[{key}]'
        if not isinstance(point, Mapping) or not isinstance(point.get('name'), str):
            raise LayoutFileError(f'{path}: {field} needs dict(name=..., id=..., color=[R, G, B], swap=...).')
        if point.get('id') != key or not isinstance(key, int) or not 0 <= key < len(keypoints):
            raise LayoutFileError(f'{path}: {field} has id {point.get("id")!r}; keys and ids are the keypoint indices '
                                  f'0..{len(keypoints) - 1}, each key equal to its id.')
        if point['name'] in names:
            raise LayoutFileError(f'{path}: {field}.name {point["name"]!r} is also the name of keypoint '
                                  f'{names.index(point["name"])}; give each keypoint its own name.')
        names.append(point['name'])
        _check_colour(path, f'{field}.color', point.get('color'))
    for key, point in keypoints.items():
        partner = point.get('swap') or ''
        if partner:
            _check_name(path, f'keypoint_info[{key}].swap', partner, names)
            back = keypoints[names.index(partner)].get('swap') or ''
            if back != point['name']:
                raise LayoutFileError(f'{path}: keypoint_info[{key}].swap: {point["name"]!r} swaps with {partner!r} '
                                      f'but {partner!r} swaps with {back!r}; a flip swaps pairs, set both swaps.')
    for key, link in (info.get('skeleton_info') or {}).items():
        field = f'skeleton_info[{key}]'
        ends = link.get('link') if isinstance(link, Mapping) else None
        if not isinstance(ends, (list, tuple)) or len(ends) != 2:
            raise LayoutFileError(f'{path}: {field}.link needs two keypoint names, got {ends!r}.')
        for end in ends:
            _check_name(path, f'{field}.link', end, names)
        _check_colour(path, f'{field}.color', link.get('color'))
    for field in ('joint_weights', 'sigmas'):
        values = info.get(field)
        if not values:  # mmpose's files give [] for none
            continue
        if len(values) != len(names):
            raise LayoutFileError(f'{path}: {len(values)} {field} for {len(names)} keypoints; give one per keypoint.')
        _check_weights(path, field, values, positive=field == 'sigmas')


def _check_name(path: str, field: str, name, known: Sequence[str]) -> None:
    if name in known:
        return
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f'did you mean {close[0]!r}? ' if close else ''
    raise LayoutFileError(f'{path}: {field} names {name!r}, which is not one of its {len(known)} names; {hint}'
                          f'(known: {", ".join(known)}).')


def _check_colour(path: str, field: str, colour) -> None:
    if colour is None:
        return
    if (not isinstance(colour, (list, tuple)) or len(colour) != 3
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in colour)):
        raise LayoutFileError(f'{path}: {field} = {colour!r}; a colour is [R, G, B], three integers 0-255.')


def _check_weights(path: str, field: str, values: Iterable, positive: bool = False) -> None:
    for i, value in enumerate(values):
        good = isinstance(value, (int, float)) and math.isfinite(value) and (value > 0 if positive else value >= 0)
        if not good:
            need = 'positive numbers' if positive else 'numbers >= 0'
            raise LayoutFileError(f'{path}: {field}[{i}] = {value!r}; {field} are {need}.')


def read_parts_metainfo(path: str) -> dict:
    """The mmseg dataset metainfo of a body-part metainfo file: ``classes``, ``palette`` (when given), ``flip_pairs``
    (id pairs, empty when none) and ``class_weight`` (when given)."""
    info = read_dataset_info(path)
    classes = info.get('classes')
    if not classes or not all(isinstance(name, str) for name in classes):
        raise LayoutFileError(f'{path}: dataset_info needs `classes`, a list of class names (0 = the first).')
    classes = tuple(classes)
    repeated = next((name for i, name in enumerate(classes) if name in classes[:i]), None)
    if repeated is not None:
        raise LayoutFileError(f'{path}: classes names {repeated!r} twice (ids {classes.index(repeated)} and '
                              f'{classes.index(repeated, classes.index(repeated) + 1)}); give each class its own name.')
    meta = dict(classes=classes, flip_pairs=_flip_pairs(path, info.get('flip_pairs') or [], classes))
    for key in ('palette', 'class_weight'):
        values = info.get(key)
        if values is None:
            continue
        if len(values) != len(classes):
            raise LayoutFileError(f'{path}: {len(values)} entries in {key} for {len(classes)} classes; give one per '
                                  'class.')
        if key == 'palette':
            for i, colour in enumerate(values):
                _check_colour(path, f'palette[{i}]', colour)
        else:
            _check_weights(path, key, values)
        meta[key] = [list(v) for v in values] if key == 'palette' else [float(v) for v in values]
    return meta


def _flip_pairs(path: str, pairs: Sequence, classes: Sequence[str]) -> List[List[int]]:
    """The id pairs of the file's ``flip_pairs`` (names or ids; none when it has none: nothing is derived from the
    class names), read by :func:`~sapiens2.metainfo.seg_flip_pairs.seg_flip_pairs`."""
    try:
        return [list(pair) for pair in seg_flip_pairs(dict(classes=classes, flip_pairs=list(pairs)))]
    except ValueError as err:
        raise LayoutFileError(f'{path}: {err}.') from None
