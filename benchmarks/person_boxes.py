"""How well people are found without boxes or a detector: the person finder's boxes (the shipped matting model's
person regions, what pose uses by default) beside the whole image as one box, on real photos.

    OMP_NUM_THREADS=2 python benchmarks/person_boxes.py                        # the 22 realpose photos
    python benchmarks/person_boxes.py --ccp data/ccp_bodyparts                 # + CCP's 150 held-out photos

Person-box AP50 (pycocotools' COCOeval, bbox) and recall at IoU 0.5 (each labelled person matched to at most one
box) over every labelled person: the 65 of ``benchmarks/data/realpose`` (COCO val2017 and CrowdPose photos, mostly
several people each; a few small unlabelled people there count the finder's boxes on them as false) and, with
``--ccp``, the one standing person of each CCP held-out photo (the bounding box of its labelled pixels).
"""
import argparse
import contextlib
import io
import os
import os.path as osp
import time
from typing import Dict, Optional, Sequence

import cv2
import numpy as np
from real_photos import DATA, by_image, ccp_samples, load_people, xyxy

from sapiens2.apis.person_finder import DEFAULT_FINDER, ForegroundPersonFinder
from sapiens2.apis.pose_video.tracking import box_iou


def realpose_truth(root: str) -> Dict[str, np.ndarray]:
    """Image path -> the (N, 4) xyxy boxes of all its labelled people."""
    people = load_people(root) + load_people(root, 'gt_coco17.json')
    return {osp.join(root, 'images', name): xyxy(np.stack([p.bbox for p in persons]))
            for name, persons in by_image(people).items()}


def ccp_truth(root: str) -> Dict[str, np.ndarray]:
    truth = {}
    for name in ccp_samples(root):
        mask = cv2.imread(osp.join(root, 'val', 'alpha', f'{name}.png'), cv2.IMREAD_GRAYSCALE) > 127
        x, y, w, h = cv2.boundingRect(mask.astype(np.uint8))
        truth[osp.join(root, 'val', 'rgb', f'{name}.jpg')] = np.array([[x, y, x + w, y + h]], np.float32)
    return truth


def recall50(found: Dict[str, np.ndarray], truth: Dict[str, np.ndarray]) -> float:
    """The share of the true boxes matched (IoU >= 0.5) by a found box, best scores first, one each."""
    matched = 0
    for key, true in truth.items():
        boxes, taken = found[key][np.argsort(-found[key][:, 4])], np.zeros(len(true), bool)
        for box in boxes:
            ious = np.where(taken, -1, box_iou(box[None, :4], true)[0])
            if len(ious) and ious.max() >= 0.5:
                taken[ious.argmax()] = True
        matched += taken.sum()
    return matched / sum(len(true) for true in truth.values())


def ap50(found: Dict[str, np.ndarray], truth: Dict[str, np.ndarray]) -> float:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    images, annotations = [], []
    for i, key in enumerate(truth):
        images.append(dict(id=i, file_name=key))
        for x1, y1, x2, y2 in truth[key][:, :4].tolist():
            annotations.append(dict(id=len(annotations) + 1, image_id=i, category_id=1, iscrowd=0,
                                    bbox=[x1, y1, x2 - x1, y2 - y1], area=(x2 - x1) * (y2 - y1)))
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
    coco.dataset = dict(images=images, annotations=annotations, categories=[dict(id=1, name='person')])
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
    results = [dict(image_id=i, category_id=1, bbox=[x1, y1, x2 - x1, y2 - y1], score=score)
               for i, key in enumerate(truth) for x1, y1, x2, y2, score in found[key].tolist()]
    if not results:
        return 0.0
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints its progress and table
        evaluation = COCOeval(coco, coco.loadRes(results), 'bbox')
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    return float(evaluation.stats[1])


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--finder', default=DEFAULT_FINDER, help='the foreground model of the person finder')
    parser.add_argument('--data', default=DATA, help='folder with gt_body12.json, gt_coco17.json and images/')
    parser.add_argument('--ccp', default=None, help='the converted Clothing Co-Parsing folder (ccp_to_bodyparts.py)')
    parser.add_argument('--device', default='cpu')
    args = parser.parse_args(argv)
    print(f'{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}')
    finder = ForegroundPersonFinder(args.finder, device=args.device)
    sets = [(f'realpose ({args.data})', realpose_truth(args.data))]
    if args.ccp:
        sets.append((f'CCP held-out ({args.ccp})', ccp_truth(args.ccp)))
    for label, truth in sets:
        images = {key: cv2.imread(key) for key in truth}
        whole = {key: np.array([[0, 0, image.shape[1], image.shape[0], 1]], np.float32)
                 for key, image in images.items()}
        start = time.perf_counter()
        found = {key: finder(image) for key, image in images.items()}
        seconds = (time.perf_counter() - start) / len(images)
        people = sum(len(boxes) for boxes in truth.values())
        print(f'{label}: {people} people in {len(truth)} photos')
        for name, boxes in ((repr(finder), found), ('the whole image as one box', whole)):
            count = sum(len(b) for b in boxes.values())
            print(f'  {name}: AP50 {ap50(boxes, truth):.3f}, recall@0.5 {recall50(boxes, truth):.3f}, {count} boxes' +
                  (f', {seconds:.2f} s per photo' if boxes is found else ''))


if __name__ == '__main__':
    main()
