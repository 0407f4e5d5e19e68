"""The one check of person boxes, whoever reads them: ``--bboxes`` files (ours, COCO annotations, COCO detection
results), the ``bboxes`` argument of the APIs, a person detector's output and the pose datasets' annotations. So a
box is refused the same way with pose, seg or matting, in one line that names where it came from and its numbers as
given.

A box is 4 numbers (5 with a score): JSON numbers, never booleans or strings (``true`` is not 1), finite, within
:data:`MAX_COORDINATE` pixels of the origin (``1e300`` would overflow every pixel computation), with a positive
width and height (a COCO ``[x, y, w, h]`` of negative width is named as written, not as converted corners). Per
image, a box must overlap the image, at most :data:`MAX_BOXES_PER_IMAGE` are taken (each person costs a pose crop
and, with ``--people``, a full-image mask), and a box given twice is one person (the repeat is dropped, with a
warning: it would be a second record with no pixel of its own).
"""
import json
import math
import warnings
from typing import Any, List, Sequence, Type

import numpy as np

#: The largest box coordinate taken, in pixels (the largest image read is 4096 pixels wide; far beyond it a
#: coordinate is a mistake, and beyond float32's range it would overflow).
MAX_COORDINATE = 1e6
#: The most person boxes taken for one image (crowd photos have hundreds of people; memory grows with each).
MAX_BOXES_PER_IMAGE = 1000
#: The forms a box is written in, by format (named in the messages).
FORMS = dict(xyxy='person boxes are [x1, y1, x2, y2] or [x1, y1, x2, y2, score]',
             xywh='COCO boxes are 4 numbers [x, y, width, height]')


class DuplicateBoxWarning(UserWarning):
    """The same person box given twice for one image: the repeat is dropped."""


def box_values(box: Any, where: str, bbox_format: str = 'xyxy', score: bool = True,
               error: Type[ValueError] = ValueError) -> List[float]:
    """The numbers of one box as given (``bbox_format`` ``xyxy`` or ``xywh``; with ``score``, a fifth number may
    follow): a list of JSON numbers (no booleans, no strings), finite and within :data:`MAX_COORDINATE`. ``error``
    (one line, naming ``where`` and the box as given) for anything else."""
    form = FORMS[bbox_format]
    lengths = (4, 5) if score else (4, )
    if isinstance(box, np.ndarray):
        box = box.tolist()
    if not isinstance(box, (list, tuple)) or len(box) not in lengths:
        raise error(f'{where} has bbox {shown(box)}; {form}')
    for value in box:
        problem = _problem(value)
        if problem:
            raise error(f'{where} has bbox {shown(box)}: {problem}; {form}')
    return [float(value) for value in box]


def _problem(value: Any) -> str:
    """What makes ``value`` no box coordinate ('' when it is one)."""
    if isinstance(value, (bool, np.bool_)):
        return f'{json.dumps(bool(value))} is a boolean, not a number'
    if isinstance(value, str):
        return f'{json.dumps(value)} is a string, not a number (write it without quotes)'
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return f'{shown(value)} is not a number'
    if not math.isfinite(value):
        return f'a non-finite value ({value})'
    if abs(value) > MAX_COORDINATE:
        return f'{value:g} lies beyond {MAX_COORDINATE:g} pixels'
    return ''


def coco_box(box: Any, where: str, error: Type[ValueError] = ValueError) -> List[float]:
    """A COCO ``[x, y, width, height]`` (:func:`box_values`, width and height > 0) as ``[x1, y1, x2, y2]``."""
    x, y, w, h = box_values(box, where, 'xywh', score=False, error=error)
    if w <= 0 or h <= 0:
        side = 'width' if w <= 0 else 'height'
        raise error(f'{where} has bbox {shown(box)}: a {side} of {w if w <= 0 else h:g}; {FORMS["xywh"]} with '
                    'width and height > 0')
    return [x, y, x + w, y + h]


def check_person_boxes(boxes: Any, image_shape: Sequence[int], name: str = 'image',
                       bbox_format: str = 'xyxy') -> np.ndarray:
    """The person boxes of one image as an (N, 5) float32 array [x1, y1, x2, y2, score] (score 1 when not given).

    A ``ValueError`` line naming ``name`` and the box for a box that :func:`box_values` refuses, an empty or
    inverted box, one that does not overlap the (H, W) image, and more than :data:`MAX_BOXES_PER_IMAGE` boxes; a box
    given twice is kept once (:class:`DuplicateBoxWarning`). An empty list means no person.
    """
    if bbox_format not in FORMS:
        raise ValueError(f'bbox_format must be "xyxy" or "xywh", got {bbox_format!r}.')
    rows = _rows(boxes, name)
    if not rows:
        return np.zeros((0, 5), np.float32)
    check_box_count(len(rows), name)
    height, width = image_shape[:2]
    checked, seen = [], {}
    for i, row in enumerate(rows):
        box = f'{name}: person box {i} {shown(row)} ({bbox_format})'
        if isinstance(row, (list, tuple, np.ndarray)) and len(row) not in (4, 5):
            raise ValueError(f'{name}: person boxes must be a list of [x1, y1, x2, y2] or [x1, y1, x2, y2, score], '
                             f'got shape ({len(rows)}, {len(row)})')
        values = box_values(row, f'{name}: person box {i}', bbox_format)
        if bbox_format == 'xywh':
            values[2:4] = [values[0] + values[2], values[1] + values[3]]
        x1, y1, x2, y2 = values[:4]
        if x2 <= x1 or y2 <= y1:
            raise ValueError(f'{box} is empty or inverted (x1, y1, x2, y2 with x2 > x1 and y2 > y1 expected)')
        if x2 <= 0 or y2 <= 0 or x1 >= width or y1 >= height:
            raise ValueError(f'{box} lies outside the {width}x{height} (width x height) image')
        key = tuple(values[:4])
        if key in seen:
            warnings.warn(DuplicateBoxWarning(f'{name}: person box {i} {shown(row)} repeats box {seen[key]}; it is '
                                              'taken once (one person)'), stacklevel=2)
            continue
        seen[key] = i
        checked.append(values + [1.0] * (5 - len(values)))
    return np.asarray(checked, np.float32).reshape(-1, 5)


def check_box_count(count: int, where: str) -> None:
    """A ``ValueError`` line when one image has more than :data:`MAX_BOXES_PER_IMAGE` boxes (``where`` names it)."""
    if count > MAX_BOXES_PER_IMAGE:
        raise ValueError(f'{where}: {count} person boxes; at most {MAX_BOXES_PER_IMAGE} are taken for one image '
                         '(each is a pose crop and, with --people, a full-image mask): keep the most confident ones')


def _rows(boxes: Any, name: str) -> list:
    """The boxes of one image as a list of rows (a single box alone is one row)."""
    if isinstance(boxes, np.ndarray):
        if boxes.dtype.kind not in 'iuf':
            raise ValueError(f'{name}: person boxes must be numbers [x1, y1, x2, y2(, score)], got an array of '
                             f'{boxes.dtype}')
        boxes = boxes.tolist()
    if not isinstance(boxes, (list, tuple)):
        raise ValueError(f'{name}: person boxes must be numbers [x1, y1, x2, y2(, score)], got {shown(boxes)}')
    if boxes and not isinstance(boxes[0], (list, tuple, np.ndarray)):
        boxes = [boxes]  # one box
    return list(boxes)


def shown(value: Any) -> str:
    """``value`` as JSON (its repr when it is no JSON; whole numbers without ``.0``), at most 80 characters."""
    try:
        text = json.dumps(_plain(value))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


def _plain(value: Any) -> Any:
    """``value`` with numpy values and tuples as JSON values and whole floats as ints (``[2, 2, 40, 60]``, as users
    write boxes, not ``[2.0, 2.0, 40.0, 60.0]``)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
