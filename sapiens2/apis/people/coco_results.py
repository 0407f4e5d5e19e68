"""A COCO results file (the list pycocotools' ``COCO.loadRes`` reads) of the people of a folder of images."""
import os.path as osp
from typing import List

import numpy as np


def image_id(image_name: str, index: int) -> int:
    """COCO's own convention: the number a file is named by (``000000397133.jpg`` -> 397133), else the image's index
    in the group."""
    stem = osp.splitext(osp.basename(image_name))[0]
    return int(stem) if stem.isdigit() else index


def coco_results(records: List[dict]) -> List[dict]:
    """One result per person (``image_id``, ``image_name``, ``category_id`` 1, ``bbox`` xywh, ``score`` (the box
    score), ``keypoints`` [x, y, score] * K, ``segmentation`` (RLE) when the person has a mask) of the writer's
    per-frame ``records`` (``image_name`` and the ``people`` result)."""
    results = []
    for index, record in enumerate(records):
        people = record['result']
        for n, person in enumerate(people['records']):
            x1, y1, x2, y2 = (float(v) for v in people['bboxes'][n][:4])
            entry = dict(image_id=image_id(record['image_name'], index), image_name=record['image_name'],
                         category_id=1, bbox=[round(v, 2) for v in (x1, y1, x2 - x1, y2 - y1)],
                         score=round(float(people['bbox_scores'][n]), 4))
            if people.get('keypoints') is not None:
                flat = np.concatenate([people['keypoints'][n], people['keypoint_scores'][n][:, None]], 1)
                entry['keypoints'] = np.round(flat, 4).reshape(-1).tolist()
            if 'mask' in person:
                entry.update(segmentation=person['mask'], area=person['area'])
            results.append(entry)
    return results
