"""A COCO results file (the list pycocotools' ``COCO.loadRes`` reads) of the people of the images of an output
folder: an index that every run adds its images to (``people/coco_results.json``)."""
import os.path as osp
from typing import Dict, Iterable, List, Optional

import numpy as np

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_bytes
from sapiens2.utils.file_lock import locked_update


def numbered_id(image_name: str) -> Optional[int]:
    """COCO's own convention: the number a file is named by (``000000397133.jpg`` -> 397133), else None."""
    stem = osp.splitext(osp.basename(image_name))[0]
    return int(stem) if stem.isdigit() else None


def image_id(image_name: str, index: int) -> int:
    """The number a file is named by, else ``index``."""
    number = numbered_id(image_name)
    return index if number is None else number


def coco_results(records: List[dict], ids: Optional[Dict[str, int]] = None) -> List[dict]:
    """One result per person (``image_id``, ``image_name``, ``category_id`` 1, ``bbox`` xywh, ``score`` (the box
    score), ``keypoints`` [x, y, score] * K, ``segmentation`` (RLE) when the person has a mask) of the writer's
    per-frame ``records`` (``image_name`` and the ``people`` result). ``ids`` maps image names to image ids (default:
    :func:`image_id` with the record's index)."""
    results = []
    for index, record in enumerate(records):
        people = record['result']
        name = record['image_name']
        number = ids[name] if ids is not None else image_id(name, index)
        for n, person in enumerate(people['records']):
            x1, y1, x2, y2 = (float(v) for v in people['bboxes'][n][:4])
            entry = dict(image_id=number, image_name=name, category_id=1,
                         bbox=[round(v, 2) for v in (x1, y1, x2 - x1, y2 - y1)],
                         score=round(float(people['bbox_scores'][n]), 4))
            if people.get('keypoints') is not None:
                flat = np.concatenate([people['keypoints'][n], people['keypoint_scores'][n][:, None]], 1)
                entry['keypoints'] = np.round(flat, 4).reshape(-1).tolist()
            if 'mask' in person:
                entry.update(segmentation=person['mask'], area=person['area'])
            results.append(entry)
    return results


def image_ids(names: Iterable[str], earlier: Dict[str, int]) -> Dict[str, int]:
    """Distinct ids for the images ``names``: the number a file is named by, else the id ``earlier`` gave the name
    while no numbered file has it, else the smallest unused number."""
    names = list(dict.fromkeys(names))
    ids = {name: numbered_id(name) for name in names}
    taken = {number for number in ids.values() if number is not None}
    for name in names:  # earlier ids first, so that new names do not take them
        if ids[name] is None and earlier.get(name) is not None and earlier[name] not in taken:
            ids[name] = earlier[name]
            taken.add(ids[name])
    free = 0  # the smallest unused number only grows as numbers are taken
    for name in names:
        if ids[name] is None:
            while free in taken:
                free += 1
            ids[name] = free
            taken.add(free)
    return ids


def update_coco_results(path: str, records: List[dict]) -> str:
    """Add the people of ``records`` to the COCO results file ``path`` (created if missing): the entries of these
    images are replaced, those of other images kept (an unnumbered image keeps its id unless a numbered file now
    has it: :func:`image_ids`). Read, updated and written atomically under the file's lock
    (:func:`~sapiens2.utils.file_lock.locked_update`), so concurrent runs into one folder lose none of each other's
    entries; a file that is not such a list is one ``ValueError`` line."""
    with locked_update(path):
        existing = _read_results(path)
        names = {record['image_name'] for record in records}
        kept = [entry for entry in existing if entry['image_name'] not in names]
        ids = image_ids([entry['image_name'] for entry in kept] + [record['image_name'] for record in records],
                        {entry['image_name']: entry['image_id'] for entry in existing})
        kept = [dict(entry, image_id=ids[entry['image_name']]) for entry in kept]
        atomic_write_bytes(path, strict_json.dumps(kept + coco_results(records, ids)).encode())
    return path


def _read_results(path: str) -> List[dict]:
    if not osp.exists(path):
        return []
    existing = strict_json.load_file(path, 'move it away to start a new one')
    if not isinstance(existing, list) or not all(isinstance(e, dict) and 'image_name' in e and 'image_id' in e
                                                 for e in existing):
        raise ValueError(f'{path} is not a COCO results list with image_name and image_id per entry (as '
                         'sapiens2 writes it); move it away to start a new one')
    return existing
