"""The left/right class pairs a horizontal flip swaps, read from a segmentation metainfo."""
import re
from collections.abc import Mapping
from typing import List, Sequence, Tuple

# 'Left_Hand', 'left hand', 'left-hand', 'hand_left', 'LeftHand'...: (side, the rest of the name).
_PREFIX = re.compile(r'^(left|right)[ _-]?(.+)$', re.IGNORECASE)
_SUFFIX = re.compile(r'^(.+?)[ _-]?(left|right)$', re.IGNORECASE)


def seg_flip_pairs(metainfo: Mapping) -> List[Tuple[int, int]]:
    """The (left, right) class ids a horizontal flip swaps, for a metainfo with ``classes``.

    ``metainfo['flip_pairs']`` when given (pairs of class ids or of class names); else the classes whose names
    differ only by a ``left``/``right`` prefix or suffix (``Left_Hand`` / ``Right_Hand``, ``arm_left`` /
    ``arm_right``, any case); none when no name says a side. Raises ``ValueError`` for a ``flip_pairs`` entry that
    is not a pair of classes.
    """
    classes = [str(name) for name in metainfo.get('classes') or ()]
    if metainfo.get('flip_pairs') is not None:
        return [_class_pair(pair, classes) for pair in metainfo['flip_pairs']]
    sides = {}
    for index, name in enumerate(classes):
        match = _PREFIX.match(name) or _SUFFIX.match(name)
        if match:
            side, rest = (match.group(1), match.group(2)) if match.re is _PREFIX else (match.group(2), match.group(1))
            sides[(match.re is _PREFIX, rest.lower(), side.lower())] = index
    return sorted((index, sides[(prefix, rest, 'right')]) for (prefix, rest, side), index in sides.items()
                  if side == 'left' and (prefix, rest, 'right') in sides)


def _class_pair(pair, classes: Sequence[str]) -> Tuple[int, int]:
    if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise ValueError(f'metainfo flip_pairs entry {pair!r} is not a pair (left class, right class)')
    return tuple(_class_id(item, classes) for item in pair)


def _class_id(item, classes: Sequence[str]) -> int:
    if isinstance(item, int) and 0 <= item < len(classes):
        return item
    if isinstance(item, str) and item in classes:
        return classes.index(item)
    raise ValueError(f'metainfo flip_pairs names {item!r}, which is not one of the {len(classes)} classes '
                     f'{list(classes)}')
