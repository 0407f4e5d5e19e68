"""Reading and schema validation of COCO-style keypoint annotation files, before xtcocotools / mmpose see them.

Every problem raises :class:`AnnotationError` (a ``ValueError``) whose message names the file, the record (image or
annotation id, or its index when the id itself is bad) and how to fix it, instead of a ``TypeError`` / ``KeyError``
deep inside xtcocotools or mmpose.
"""
import json
import math
from typing import Dict, Mapping, Sequence

from sapiens2.structures.person_boxes import box_values


class AnnotationError(ValueError):
    """A malformed annotation file: the message names the file, the record and how to fix it."""


IMAGE_FIELDS = ('id', 'file_name', 'width', 'height')
#: COCO keypoint visibility: 0 not labelled, 1 labelled but occluded, 2 labelled and visible.
VISIBILITY_VALUES = (0, 1, 2)


def read_annotation_json(path: str, name: str = None) -> dict:
    """Parse the JSON file at ``path``; decoding errors name the file (``name``, default ``path``) and the position."""
    name = name or path
    try:
        with open(path, 'rb') as f:
            return json.loads(f.read().decode('utf-8'))
    except json.JSONDecodeError as err:
        raise AnnotationError(f'{name}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); the file '
                              'is truncated or corrupt, re-export or re-download it.') from err
    except UnicodeDecodeError as err:
        raise AnnotationError(f'{name}: not UTF-8 text ({err.reason} at byte {err.start}); is it a JSON file?') from err


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_image(img, index: int, name: str) -> None:
    where = f'image {img["id"]}' if isinstance(img, dict) and _is_int(img.get('id')) else f'images[{index}]'
    if not isinstance(img, dict):
        raise AnnotationError(f'{name}: {where} is {type(img).__name__} {img!r:.60}; every entry of "images" must be '
                              'an object with id, file_name, width and height.')
    missing = [key for key in IMAGE_FIELDS if key not in img]
    if missing:
        raise AnnotationError(f'{name}: {where} lacks {missing}; every image needs id, file_name, width and height.')
    problems = {
        'id': (_is_int(img['id']), 'an integer'),
        'file_name': (isinstance(img['file_name'], str) and img['file_name'] != '', 'a non-empty path string'),
        'width': (_is_number(img['width']) and img['width'] > 0, 'a positive number of pixels'),
        'height': (_is_number(img['height']) and img['height'] > 0, 'a positive number of pixels'),
    }
    for key, (ok, expected) in problems.items():
        if not ok:
            raise AnnotationError(f'{name}: {where} has {key} {img[key]!r:.60}; expected {expected}.')


def _check_keypoints(values, num: int, ann_id, field: str, name: str) -> None:
    if not isinstance(values, list):
        raise AnnotationError(f'{name}: annotation {ann_id} field "{field}" is {type(values).__name__} '
                              f'{values!r:.60}; expected a flat list of {num} keypoints x 3 (x, y, v) numbers.')
    if len(values) != num * 3:
        raise AnnotationError(f'{name}: annotation {ann_id} field "{field}" has {len(values)} values; expected {num} '
                              f'keypoints x 3 (x, y, v) = {num * 3}.')
    bad = next((i for i, v in enumerate(values) if not _is_number(v)), None)
    if bad is not None:
        raise AnnotationError(f'{name}: annotation {ann_id} field "{field}" value {bad} (keypoint {bad // 3}) is '
                              f'{values[bad]!r:.60}; expected finite numbers (x, y, v); mark unlabelled keypoints '
                              'as 0, 0, 0.')
    bad = next((i for i in range(2, len(values), 3) if values[i] not in VISIBILITY_VALUES), None)
    if bad is not None:
        raise AnnotationError(f'{name}: annotation {ann_id} field "{field}" keypoint {bad // 3} has visibility '
                              f'{values[bad]!r:.60}; expected 0 (not labelled), 1 (labelled, occluded) or 2 (labelled, '
                              'visible), as in COCO: other values would weight that keypoint wrongly in the loss.')


def _check_bbox(bbox, ann_id, img: dict, name: str) -> None:
    x, y, w, h = box_values(bbox, f'{name}: annotation {ann_id}', 'xywh', score=False, error=AnnotationError)
    if min(w, h) < 0:
        raise AnnotationError(f'{name}: annotation {ann_id} has bbox {bbox}: a negative width or height; expected '
                              '[x, y, w, h] with w, h >= 0.')
    if w > 0 and h > 0 and (min(x + w, img['width']) <= max(x, 0) or min(y + h, img['height']) <= max(y, 0)):
        raise AnnotationError(f'{name}: annotation {ann_id} has bbox {bbox} (x, y, w, h) outside the image {img["id"]} '
                              f'({img["file_name"]}, {img["width"]}x{img["height"]}); fix the box or the image '
                              'width/height, or remove the annotation.')


def _check_annotation(ann, index: int, images: Mapping[int, dict], keypoint_counts: Mapping[str, int],
                      required: Sequence[str], name: str) -> None:
    if not isinstance(ann, dict):
        raise AnnotationError(f'{name}: annotations[{index}] is {type(ann).__name__} {ann!r:.60}; every entry of '
                              '"annotations" must be an object with id, image_id, bbox and keypoints.')
    ann_id = ann.get('id') if _is_int(ann.get('id')) else f'annotations[{index}]'
    for key in ('id', 'image_id'):
        if not _is_int(ann.get(key)):
            raise AnnotationError(f'{name}: annotation {ann_id} has {key} {ann.get(key, "<missing>")!r:.60}; expected '
                                  f'an integer{" (the id of its image)" if key == "image_id" else ""}.')
    for key, ok, expected in (('category_id', _is_int, 'an integer'),
                              ('iscrowd', lambda v: v in (0, 1), '0 or 1'),
                              ('num_keypoints', lambda v: _is_int(v) and v >= 0, 'a count >= 0'),
                              ('area', lambda v: _is_number(v) and v >= 0, 'a finite number >= 0')):
        if key in ann and not ok(ann[key]):
            raise AnnotationError(f'{name}: annotation {ann_id} has {key} {ann[key]!r:.60}; expected {expected} '
                                  '(or leave the field out).')
    fields = [field for field in keypoint_counts if field in ann]
    if not any(field in ann for field in required):
        raise AnnotationError(f'{name}: annotation {ann_id} has none of the keypoint fields {list(required)}; add the '
                              'keypoints as a flat list of (x, y, v) numbers.')
    for field in fields:
        _check_keypoints(ann[field], keypoint_counts[field], ann_id, field, name)
    if 'bbox' not in ann:
        raise AnnotationError(f'{name}: annotation {ann_id} lacks "bbox"; add the person box as [x, y, w, h].')
    if ann['image_id'] in images:  # orphans are reported together by the caller
        _check_bbox(ann['bbox'], ann_id, images[ann['image_id']], name)


def validate_keypoint_coco(data, name: str, keypoint_counts: Mapping[str, int], required: Sequence[str]) -> None:
    """Check a parsed COCO-style keypoint document; raise :class:`AnnotationError` on the first problem.

    Checked: a top-level object with ``images`` and ``annotations`` lists (``categories``, if present, a list of
    objects with an integer id); images with an integer ``id`` (unique), a non-empty ``file_name``, positive
    ``width`` / ``height``; annotations with integer ``id`` (unique) and ``image_id`` (of a listed image), optional
    integer ``category_id`` (one of ``categories``, when the file lists them), ``iscrowd`` 0/1, ``num_keypoints``
    >= 0, ``area`` >= 0, a bbox of 4 finite numbers with w, h >= 0 overlapping its image (empty boxes are allowed:
    the reader skips them), at least one of the ``required`` keypoint fields, and every present field of
    ``keypoint_counts`` a flat list of ``count`` x 3 finite numbers whose visibilities are 0, 1 or 2.

    Args:
        data: The parsed JSON.
        name: The file name used in the messages.
        keypoint_counts: {keypoint field: number of keypoints}.
        required: Keypoint fields of which an annotation needs at least one.
    """
    if not isinstance(data, dict):
        raise AnnotationError(f'{name}: the top level is {type(data).__name__}; expected a COCO object '
                              '{"images": [...], "annotations": [...], "categories": [...]}.')
    for key in ('images', 'annotations'):
        if not isinstance(data.get(key), list):
            found = 'missing' if key not in data else f'{type(data[key]).__name__} {data[key]!r:.60}'
            raise AnnotationError(f'{name}: "{key}" is {found}; a COCO keypoint file needs "images" and '
                                  '"annotations" lists.')
    if 'categories' in data:
        cats = data['categories']
        if not isinstance(cats, list) or not all(isinstance(c, dict) and _is_int(c.get('id')) for c in cats):
            raise AnnotationError(f'{name}: "categories" is {cats!r:.80}; expected a list of objects with an integer '
                                  'id, e.g. [{"id": 1, "name": "person"}] (or leave it out).')
    images: Dict[int, dict] = {}
    for i, img in enumerate(data['images']):
        _check_image(img, i, name)
        if img['id'] in images:
            raise AnnotationError(f'{name}: image id {img["id"]} is used twice; image ids must be unique.')
        images[img['id']] = img
    category_ids = sorted({c['id'] for c in data['categories']}) if 'categories' in data else None
    ann_ids, orphans = set(), []
    for i, ann in enumerate(data['annotations']):
        _check_annotation(ann, i, images, keypoint_counts, required, name)
        if category_ids is not None and 'category_id' in ann and ann['category_id'] not in category_ids:
            raise AnnotationError(f'{name}: annotation {ann["id"]} has category_id {ann["category_id"]}, which '
                                  f'"categories" does not list (ids: {category_ids[:10]}); give it the person '
                                  'category id, or remove the annotation.')
        if ann['id'] in ann_ids:
            raise AnnotationError(f'{name}: annotation id {ann["id"]} is used twice; annotation ids must be unique.')
        ann_ids.add(ann['id'])
        if ann['image_id'] not in images:
            orphans.append(ann['id'])
    if orphans:
        raise AnnotationError(f'{name}: annotations {orphans[:5]} (of {len(orphans)}) refer to image ids missing from '
                              '"images"; add the images or remove the annotations.')
