"""Person boxes for pose in the formats users have them, matched to the inputs of one run (``--bboxes FILE``,
``Sapiens2Inferencer(...)(inputs, bboxes=...)``).

Three formats, told apart by their shape:

* ours: ``{"image name": [[x1, y1, x2, y2(, score)], ...]}``;
* a COCO annotation file: ``{"images": [{id, file_name}], "annotations": [{image_id, bbox [x, y, w, h],
  category_id, iscrowd}], "categories": [...]}``: the person boxes (category ``person``, else id 1; ``iscrowd`` 0) of
  every listed image, an image without any meaning nobody;
* COCO detection results: ``[{image_id, bbox [x, y, w, h], score, category_id}]``: the person boxes (category 1)
  scoring at least ``score_thr``, keyed by ``image_name`` where an entry has one (sapiens2's own
  ``people/coco_results.json``), else by ``image_id``.

A key names an input (:func:`match_bboxes`) by its output name (``a``, ``sub/a``, ``array_000000``,
``<video>_000012``), its file name (``a.jpg``, ``val2017/a.jpg``; a name shortened for the output files matches by
its whole name too), or, for a number (a COCO ``image_id``), an image
whose file stem is that number (``000000000785.jpg`` is 785). A file may hold more images than a run: the entries of
other images are left out, and one line says how many were used.
"""
import json
import logging
import math
import os
import os.path as osp
from typing import Any, Dict, List, Sequence, Union

import numpy as np

from sapiens2.structures.person_boxes import box_values, check_box_count, coco_box, shown

from .io.sources import IMAGE_EXTENSIONS, Source, frame_name

Boxes = List[List[float]]
BoxesInput = Union[str, os.PathLike, dict, list]
#: COCO's category id of a person, used when a file names no ``person`` category.
PERSON_CATEGORY = 1


def load_bboxes(bboxes: BoxesInput, score_thr: float = 0.0) -> Dict[Union[str, int], Boxes]:
    """Person boxes (xyxy, optional score) per image key from a JSON file path or its content (see the module
    docstring); one ``ValueError`` line naming the file and the entry for what cannot be read."""
    origin = 'bboxes'
    if isinstance(bboxes, (str, os.PathLike)):
        origin = os.fspath(bboxes)
        try:
            with open(origin) as f:
                bboxes = json.load(f)
        except FileNotFoundError as err:
            raise FileNotFoundError(f'--bboxes {origin} does not exist') from err
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f'--bboxes {origin} is not valid JSON ({err})') from err
    if isinstance(bboxes, dict) and 'annotations' in bboxes:
        loaded = _coco_annotations(bboxes, origin)
    elif isinstance(bboxes, dict):
        loaded = {key: _own_boxes(boxes, f'{origin}: entry {key!r}') for key, boxes in bboxes.items()}
    elif isinstance(bboxes, list):
        loaded = _coco_results(bboxes, origin, score_thr)
    else:
        loaded = None
    if loaded is not None:
        for key, boxes in loaded.items():  # a crowd beyond the limit fails before any model is built
            check_box_count(len(boxes), f'{origin}: entry {key!r}')
        return loaded
    raise ValueError(f'{origin}: person boxes are a JSON object {{"image name": [[x1, y1, x2, y2], ...]}}, a COCO '
                     f'annotation file or a list of COCO detection results, got {type(bboxes).__name__}')


def _coco_annotations(data: dict, origin: str) -> Dict[Union[str, int], Boxes]:
    images, annotations = data.get('images'), data['annotations']
    if not isinstance(images, list) or not isinstance(annotations, list):
        raise ValueError(f'{origin}: a COCO annotation file needs the lists "images" ([{{id, file_name}}]) and '
                         '"annotations"')
    names: Dict[Any, str] = {}
    for i, image in enumerate(images):
        if not isinstance(image, dict) or 'id' not in image or not isinstance(image.get('file_name'), str):
            raise ValueError(f'{origin}: images[{i}] needs "id" and "file_name", got {shown(image)}')
        names[image['id']] = image['file_name']
    person = _person_categories(data.get('categories'), origin)
    boxes: Dict[Union[str, int], Boxes] = {name: [] for name in names.values()}
    for i, ann in enumerate(annotations):
        where = f'{origin}: annotations[{i}]'
        if not isinstance(ann, dict) or 'image_id' not in ann:
            raise ValueError(f'{where} needs "image_id" and "bbox" [x, y, w, h], got {shown(ann)}')
        if ann['image_id'] not in names:
            raise ValueError(f'{where} has image_id {ann["image_id"]!r}, which no entry of "images" has')
        if ann.get('category_id', PERSON_CATEGORY) in person and not ann.get('iscrowd', 0):
            boxes[names[ann['image_id']]].append(coco_box(ann.get('bbox'), _annotation(where, ann)))
    return boxes


def _person_categories(categories: Any, origin: str) -> set:
    if categories is None:
        return {PERSON_CATEGORY}
    if not isinstance(categories, list) or not all(isinstance(c, dict) and 'id' in c for c in categories):
        raise ValueError(f'{origin}: "categories" must be a list of {{id, name}}')
    named = {c['id'] for c in categories if str(c.get('name', '')).lower() == 'person'}
    return named or {PERSON_CATEGORY}


def _coco_results(results: list, origin: str, score_thr: float) -> Dict[Union[str, int], Boxes]:
    boxes: Dict[Union[str, int], Boxes] = {}
    for i, entry in enumerate(results):
        where = f'{origin}: entry {i}'
        if not isinstance(entry, dict) or not ('image_name' in entry or 'image_id' in entry):
            raise ValueError(f'{where} needs "image_id" and "bbox" [x, y, w, h] (COCO detection results), got '
                             f'{shown(entry)}')
        key = entry.get('image_name', entry.get('image_id'))
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise ValueError(f'{where} has image_id {key!r}; give an integer or a string')
        box = coco_box(entry.get('bbox'), where)
        score = entry.get('score', 1.0)
        if not _is_number(score):
            raise ValueError(f'{where} has score {score!r}; give a number')
        boxes.setdefault(key, [])
        if entry.get('category_id', PERSON_CATEGORY) == PERSON_CATEGORY and score >= score_thr:
            boxes[key].append(box + [float(score)])
    return boxes


def _own_boxes(boxes: Any, where: str) -> Boxes:
    """An entry of our format: a list of boxes [x1, y1, x2, y2(, score)], each checked as every box is
    (:func:`~sapiens2.structures.person_boxes.box_values`)."""
    if isinstance(boxes, np.ndarray) and boxes.ndim == 2:
        boxes = list(boxes)
    if not isinstance(boxes, (list, tuple)):
        raise ValueError(f'{where} is {shown(boxes)}; give a list of person boxes [[x1, y1, x2, y2(, score)], ...] '
                         '(an empty list: nobody)')
    if boxes and not isinstance(boxes[0], (list, tuple, np.ndarray)):
        return [box_values(boxes, where)]  # one box, not in a list
    return [box_values(box, f'{where} box {i}') for i, box in enumerate(boxes)]


def _annotation(where: str, ann: dict) -> str:
    """``where`` with the annotation's id, when it has one."""
    return f'{where} (id {ann["id"]!r})' if 'id' in ann else where


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def match_bboxes(entries: Dict[Union[str, int], Boxes], sources: Sequence[Source],
                 origin: str = 'bboxes') -> Dict[str, Boxes]:
    """The entries that name a frame of ``sources`` (see the module docstring), keyed by frame name; when some name
    no input, one info line says how many were used. Raises a ``ValueError`` line when entries exist but none names
    an input, or when two entries name the same input."""
    exact: Dict[str, str] = {}  # output name or file name -> frame name
    by_number: Dict[int, List[str]] = {}
    by_stem: Dict[str, List[str]] = {}
    for source in sources:
        names = [source.name] + ([source.long_name] if source.long_name else [])  # a shortened name: both
        if source.kind == 'video':
            for name in names:
                exact.update((frame_name(name, i), source.frame_name(i)) for i in range(len(source)))
            continue
        for name in names:
            exact[name] = source.name
            base = osp.basename(name)
            by_stem.setdefault(base, []).append(source.name)
            if base.isdigit():
                by_number.setdefault(int(base), []).append(source.name)
    matched: Dict[str, Boxes] = {}
    keys: Dict[str, Union[str, int]] = {}
    for key, boxes in entries.items():
        frame = _frame_of(key, exact, by_number, by_stem, origin)
        if frame is None:
            continue
        if frame in keys:
            raise ValueError(f'{origin}: entries {keys[frame]!r} and {key!r} both name input {frame}; keep one')
        keys[frame], matched[frame] = key, boxes
    unused = [key for key in entries if key not in keys.values()]
    if entries and not matched:
        names = sorted(exact)
        raise ValueError(f'{origin}: none of its {len(entries)} entries names an input of this run ({unused[:3]}...); '
                         f'keys are image names ({names[:3]}{"..." if len(names) > 3 else ""}), file names, COCO '
                         'image ids (the number of a file stem) or <video>_000012 for video frames')
    if unused:
        from mmengine.logging import print_log  # not at import: the CLI reads the file before MMEngine is needed
        print_log(f'{origin}: {len(matched)} of {len(entries)} entries used (the others name no input of this run, '
                  f'e.g. {unused[:3]})', logger='current', level=logging.INFO)
    return matched


def _frame_of(key: Union[str, int], exact: Dict[str, str], by_number: Dict[int, List[str]],
              by_stem: Dict[str, List[str]], origin: str) -> Union[str, None]:
    """The frame ``key`` names: exactly, as a file name (extension and folders dropped) or as a COCO image id."""
    if isinstance(key, str) and key in exact:
        return exact[key]
    candidates: List[str] = []
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        candidates = by_number.get(int(key), [])
    elif isinstance(key, str):
        path = key.replace('\\', '/')
        stem, ext = osp.splitext(path)
        if ext.lower() in IMAGE_EXTENSIONS and stem in exact:
            return exact[stem]
        candidates = by_stem.get(osp.basename(stem if ext.lower() in IMAGE_EXTENSIONS else path), [])
    if len(candidates) > 1:
        raise ValueError(f'{origin}: entry {key!r} could name {candidates[0]} or {candidates[1]}; key it by the '
                         'output name')
    return candidates[0] if candidates else None
