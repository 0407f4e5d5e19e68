"""The demo models on real people: 16 people in 6 photos (COCO val2017 and CrowdPose, ``benchmarks/data/realpose``),
49 more COCO people in 16 photos with all 17 keypoints, and LSPET's held-out split when given.

    OMP_NUM_THREADS=2 python benchmarks/real_photos.py                 # the shipped pose-tiny, seg-tiny, matting-tiny
    python benchmarks/real_photos.py --pose none --ccp data/ccp_bodyparts  # also the CCP held-out split
    python benchmarks/real_photos.py --pose configs/pose/my_pose.py --pose-weights work_dirs/x/pose.safetensors
    python benchmarks/real_photos.py --lspet data/lspet    # + LSPET's held-out people, converted by
    # python tools/dataset_converters/lspet_to_coco.py --lspet data/lspet --out data/lspet/annotations

* **pose** (true person boxes): PCK@0.1 and @0.2 of the box's longer side over the labelled body keypoints (the 12
  COCO-17 points from the shoulders down), the model's keypoints picked by their names in its metainfo; beside the
  best constant predictor, each keypoint at its median box-normalised position over the *other* people
  (leave-one-out, so it never sees the person it predicts): normalised by the box's width and height ("box", the
  better one), and by its longer side ("longer", the constant of issue 40: 0.28 / 0.60); and the share of the
  labelled body keypoints that a picture draws (scored at or above the task's drawing threshold, ``--kpt-thr``),
  in all and per joint (left and right together), and how many of the drawn ones are right (within 0.2). The same
  on the 49 people of ``gt_coco17.json``, with COCO keypoint AP and AP50 (OKS with COCO's 17 sigmas, xtcocotools'
  ``COCOeval`` as mmpose's ``CocoMetric`` runs it; the model's 17 COCO points picked by name, a person's score the
  mean of its keypoint scores) beside the constant's; and on LSPET's held-out split (``--lspet``: the last 500 of
  LSP-Extended's photos, one person each, 12 body joints, boxes from the labelled joints), PCK beside the constant.
* **pose on photos without a person** (the whole photo one box): the highest keypoint score on a plain grey wall
  (256x192) and on the package photos (scikit-image's and scikit-learn's scenes, ``package_photo_paths``), and how
  many keypoints a picture would draw (at or above ``--kpt-thr``): an empty photo should get none.
* **seg / matting**: the person foreground (seg labels > 0; alpha >= 0.5) against the union of the COCO polygons,
  as IoU, on the photos whose people all have polygons; beside the person boxes filled in (a box-filled mask).
* **CCP held-out** (``--ccp DIR``: the folder ``tools/dataset_converters/ccp_to_bodyparts.py`` wrote; skipped
  without it): on its ``val/`` photos (Clothing Co-Parsing, Yang, Luo and Lin, CVPR 2014; one standing person
  each), the person IoU (model foreground against every pixel CCP labels; mean over the photos) beside the true
  person's bounding box filled in, and for seg the IoU of each class CCP speaks for (those in its converted label
  maps; pixels it leaves unassigned, 255, are not scored), summed over the photos as mmseg's IoUMetric does.

The SynthHumans-trained models have never seen a real person: these figures say how far that carries. Far too few
people to train or tune on; the data's provenance is in ``benchmarks/data/realpose/README.md``.
"""
import argparse
import json
import os
import os.path as osp
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import cv2
import numpy as np

from sapiens2.structures.keypoint_formats import COCO17_NAMES

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
DATA = osp.join(ROOT, 'benchmarks', 'data', 'realpose')
LSPET_VAL = osp.join('annotations', 'lspet_keypoints308_val.json')  # in --lspet, written by lspet_to_coco.py
# COCO's per-keypoint OKS sigmas (cocoapi), in COCO17_NAMES' order
COCO17_SIGMAS = np.array([.026, .025, .025, .035, .035, .079, .079, .072, .072, .062, .062, .107, .107, .087, .087,
                          .089, .089])
BODY12_NAMES = COCO17_NAMES[5:]  # shoulders, elbows, wrists, hips, knees, ankles (left, right), COCO order
JOINTS = tuple(name.split('_', 1)[1] + 's' for name in BODY12_NAMES[::2])  # the left/right pairs: 'shoulders'...
THRESHOLDS = (0.1, 0.2)


@dataclass
class Person:
    image: str  # file name in <data>/images
    bbox: np.ndarray  # (4, ) xywh in pixels
    body12: np.ndarray  # (12, 3) x, y, visibility (0: not labelled)
    polygons: Optional[List[List[float]]]  # COCO polygons (flat x, y lists), None when not labelled
    keypoints17: Optional[np.ndarray] = None  # (17, 3) all COCO keypoints, where the file has them
    area: Optional[float] = None  # COCO's segment area (OKS scale), where the file has it


def load_people(root: str = DATA, file: str = 'gt_body12.json') -> List[Person]:
    """The people of ``<root>/<file>`` (``gt_body12.json`` or ``gt_coco17.json``), photo by photo in file order."""
    with open(osp.join(root, file)) as f:
        images = json.load(f)['images']
    people = []
    for name, persons in images.items():
        for person in persons:
            body = np.asarray(person['body12'], np.float64).reshape(-1, 3)
            if body.shape != (len(BODY12_NAMES), 3):
                raise ValueError(f'{root}/{file}: a person of {name} has {body.shape[0]} body keypoints, '
                                 f'expected {len(BODY12_NAMES)} ([x, y, visibility] each)')
            full = person.get('keypoints17')
            if full is not None:
                full = np.asarray(full, np.float64).reshape(-1, 3)
                if full.shape != (len(COCO17_NAMES), 3):
                    raise ValueError(f'{root}/{file}: a person of {name} has {full.shape[0]} keypoints17, '
                                     f'expected {len(COCO17_NAMES)}')
            people.append(Person(name, np.asarray(person['bbox'], np.float64), body, person.get('polygons'), full,
                                 person.get('area')))
    return people


def load_lspet_people(folder: str) -> List[Person]:
    """LSPET's held-out people: ``<folder>/annotations/lspet_keypoints308_val.json`` (lspet_to_coco.py), their 12
    body joints picked by name from the 308 layout (neck and the unlabelled points aside)."""
    path = osp.join(folder, LSPET_VAL)
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: missing; make it with python tools/dataset_converters/lspet_to_coco.py '
                                f'--lspet {folder} --out {osp.join(folder, "annotations")}')
    with open(path) as f:
        data = json.load(f)
    columns = body12_indices(data['categories'][0]['keypoints'])
    names = {image['id']: osp.relpath(image['file_name'], 'images') for image in data['images']}
    return [Person(names[ann['image_id']], np.asarray(ann['bbox'], np.float64),
                   np.asarray(ann['keypoints'], np.float64).reshape(-1, 3)[columns], None)
            for ann in data['annotations']]


def body12_indices(keypoint_names: Sequence[str], wanted: Sequence[str] = BODY12_NAMES) -> np.ndarray:
    """Where the 12 body keypoints (or ``wanted``) are in a model's layout, found by name."""
    index = {name: i for i, name in enumerate(keypoint_names)}
    missing = [name for name in wanted if name not in index]
    if missing:
        raise ValueError(f'the model\'s keypoints have no {missing}: its metainfo must name the COCO body joints')
    return np.array([index[name] for name in wanted])


def pck(pred: np.ndarray, truth: np.ndarray, boxes: np.ndarray, threshold: float) -> float:
    """Share of the labelled keypoints (``truth`` (N, K, 3), visibility > 0) that ``pred`` (N, K, 2) places within
    ``threshold`` x the longer side of the person's box (``boxes`` (N, 4) xywh)."""
    labelled = truth[..., 2] > 0
    distance = np.linalg.norm(pred - truth[..., :2], axis=-1)
    scale = boxes[:, 2:4].max(axis=1)[:, None]
    return float((distance <= threshold * scale)[labelled].mean())


def drawn_right(pred: np.ndarray, truth: np.ndarray, boxes: np.ndarray, drawn: np.ndarray, threshold: float) -> float:
    """Share of the labelled keypoints that a picture draws (``drawn`` (N, K) bool) that lie within ``threshold`` x
    the box's longer side: how many of the drawn points are right (NaN when none is drawn)."""
    shown = drawn & (truth[..., 2] > 0)
    if not shown.any():
        return float('nan')
    distance = np.linalg.norm(pred - truth[..., :2], axis=-1)
    return float((distance <= threshold * boxes[:, 2:4].max(axis=1)[:, None])[shown].mean())


def leave_one_out_constant(truth: np.ndarray, boxes: np.ndarray, scale: str = 'box') -> np.ndarray:
    """(N, K, 2): each person's keypoints at their median box-normalised positions over the other people (over
    those who have the keypoint labelled; the box's top-left corner plus half its ``scale`` when nobody else has it).

    Positions are relative to the box's top-left corner, divided by its width and height (``scale='box'``, the
    better constant) or by its longer side on both axes (``'longer'``: the constant the issue quotes)."""
    if scale not in ('box', 'longer'):
        raise ValueError(f"scale must be 'box' or 'longer', got {scale!r}")
    size = boxes[:, 2:4] if scale == 'box' else np.repeat(boxes[:, 2:4].max(axis=1, keepdims=True), 2, axis=1)
    relative = (truth[..., :2] - boxes[:, None, :2]) / size[:, None]
    relative[truth[..., 2] <= 0] = np.nan
    pred = np.empty(truth.shape[:2] + (2, ))
    for i in range(len(truth)):
        others = np.delete(relative, i, axis=0)
        seen = ~np.isnan(others[..., 0]).all(axis=0)
        median = np.full((truth.shape[1], 2), 0.5)
        median[seen] = np.nanmedian(others[:, seen], axis=0)
        pred[i] = boxes[i, :2] + median * size[i]
    return pred


def polygon_mask(polygons: Sequence[Sequence[float]], shape) -> np.ndarray:
    """(H, W) bool: the union of COCO polygons (flat [x1, y1, x2, y2, ...] lists), rasterised as COCO does
    (pycocotools)."""
    from pycocotools import mask as coco_mask
    height, width = shape[:2]
    rles = coco_mask.frPyObjects([list(map(float, p)) for p in polygons], height, width)
    return coco_mask.decode(coco_mask.merge(rles)).astype(bool)


def box_mask(boxes: np.ndarray, shape) -> np.ndarray:
    """(H, W) bool: the xywh ``boxes`` filled."""
    mask = np.zeros(shape[:2], bool)
    for x, y, w, h in np.asarray(boxes, np.float64).reshape(-1, 4):
        mask[max(0, int(round(y))):int(round(y + h)), max(0, int(round(x))):int(round(x + w))] = True
    return mask


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


def xyxy(boxes: np.ndarray) -> np.ndarray:
    return np.concatenate([boxes[:, :2], boxes[:, :2] + boxes[:, 2:4]], axis=1)


def by_image(people: List[Person]) -> Dict[str, List[Person]]:
    images: Dict[str, List[Person]] = {}
    for person in people:
        images.setdefault(person.image, []).append(person)
    return images


def predict_keypoints(task, people: List[Person], root: str) -> Tuple[np.ndarray, np.ndarray]:
    """(N, K, 2) keypoints and (N, K) scores of a pose task on ``people`` with their true boxes, in their order."""
    pred = [None] * len(people)
    order = {id(person): i for i, person in enumerate(people)}
    for name, persons in by_image(people).items():
        image = cv2.imread(osp.join(root, 'images', name))
        if image is None:
            raise FileNotFoundError(f'{osp.join(root, "images", name)}: missing or not an image')
        boxes = xyxy(np.stack([p.bbox for p in persons]))
        result = task.predict([image], bboxes=[boxes.tolist()], names=[name])[0]
        for person, keypoints, scores in zip(persons, result['keypoints'], result['keypoint_scores']):
            pred[order[id(person)]] = (np.asarray(keypoints), np.asarray(scores))
    return np.stack([p[0] for p in pred]), np.stack([p[1] for p in pred])


def keypoint_ap(pred: np.ndarray, scores: np.ndarray, people: List[Person]) -> Dict[str, float]:
    """COCO keypoint AP and AP50 (OKS with ``COCO17_SIGMAS``, xtcocotools' ``COCOeval`` as mmpose's ``CocoMetric``
    runs it) of ``pred`` (N, 17, 2) scored ``scores`` (N, 17), one prediction per person of ``people`` (each with
    ``keypoints17`` and ``area``); a prediction's score is the mean of its keypoint scores."""
    import contextlib
    import io

    from xtcocotools.coco import COCO
    from xtcocotools.cocoeval import COCOeval
    images = {name: i for i, name in enumerate(by_image(people), 1)}
    truth = COCO()
    truth.dataset = dict(
        images=[dict(id=i) for i in images.values()],
        categories=[dict(id=1, name='person', keypoints=list(COCO17_NAMES), skeleton=[])],
        annotations=[dict(id=n, image_id=images[p.image], category_id=1, bbox=p.bbox.tolist(), area=float(p.area),
                          iscrowd=0, keypoints=p.keypoints17.reshape(-1).tolist(),
                          num_keypoints=int((p.keypoints17[:, 2] > 0).sum())) for n, p in enumerate(people, 1)])
    detections = [dict(image_id=images[p.image], category_id=1, score=float(np.mean(s)),
                       keypoints=np.concatenate([k, s[:, None]], axis=1).reshape(-1).tolist())
                  for p, k, s in zip(people, pred, scores)]
    with contextlib.redirect_stdout(io.StringIO()):  # COCO's index and summary prints
        truth.createIndex()
        evaluation = COCOeval(truth, truth.loadRes(detections), 'keypoints', COCO17_SIGMAS, use_area=True)
        evaluation.params.useSegm = None
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    return {'AP': float(evaluation.stats[0]), 'AP50': float(evaluation.stats[1])}


def pose_scores(task, people: List[Person], root: str, kpt_thr: Optional[float] = None) -> Dict[str, float]:
    """PCK of a pose inference task with the true boxes, of the leave-one-out constant, and the share of the labelled
    keypoints scored at or above ``kpt_thr`` (those a picture draws; default the task's own drawing threshold), in
    all and per joint (``drawn@0.3 shoulders``...); COCO keypoint AP and AP50 of the model and of the constant
    (``constant (box) AP``) where every person has all 17 keypoints."""
    kpt_thr = task.kpt_thr if kpt_thr is None else kpt_thr
    names = task.keypoint_names()
    keypoints, keypoint_scores = predict_keypoints(task, people, root)
    columns = body12_indices(names)
    pred, scored = keypoints[:, columns], keypoint_scores[:, columns]
    truth = np.stack([p.body12 for p in people])
    boxes = np.stack([p.bbox for p in people])
    constants = {scale: leave_one_out_constant(truth, boxes, scale) for scale in ('box', 'longer')}
    scores = {}
    if all(p.keypoints17 is not None and p.area for p in people):
        coco17 = body12_indices(names, COCO17_NAMES)
        scores.update(keypoint_ap(keypoints[:, coco17], keypoint_scores[:, coco17], people))
        constant = leave_one_out_constant(np.stack([p.keypoints17 for p in people]), boxes)
        scores.update({f'constant (box) {k}': v for k, v in keypoint_ap(
            constant, np.ones(constant.shape[:2]), people).items()})
    for threshold in THRESHOLDS:
        scores[f'PCK@{threshold}'] = pck(pred, truth, boxes, threshold)
        for scale, constant in constants.items():
            scores[f'constant ({scale}) PCK@{threshold}'] = pck(constant, truth, boxes, threshold)
    drawn, labelled = scored >= kpt_thr, truth[..., 2] > 0  # (people, 12) each
    scores[f'drawn@{kpt_thr}'] = float(drawn[labelled].mean())
    scores[f'drawn@{kpt_thr} right@{THRESHOLDS[-1]}'] = drawn_right(pred, truth, boxes, drawn, THRESHOLDS[-1])
    for pair, joint in enumerate(JOINTS):
        columns = slice(2 * pair, 2 * pair + 2)
        scores[f'drawn@{kpt_thr} {joint}'] = float(drawn[:, columns][labelled[:, columns]].mean())
    return scores


def empty_photo_scores(task, kpt_thr: Optional[float] = None) -> Dict[str, float]:
    """The highest keypoint score on photos without a person (a grey wall, the package photos), each one whole as
    one person box, and the keypoints scored at or above ``kpt_thr`` (default the task's drawing threshold)."""
    from sapiens2.datasets.synthhumans.photos import package_photo_paths
    kpt_thr = task.kpt_thr if kpt_thr is None else kpt_thr
    photos = [('grey wall', np.full((256, 192, 3), 128, np.uint8))]
    photos += [(osp.basename(path), cv2.imread(path)) for path in package_photo_paths()]
    highest, drawn = {}, 0
    for name, image in photos:
        height, width = image.shape[:2]
        result = task.predict([image], bboxes=[[[0, 0, width, height]]], names=[name])[0]
        scores = np.asarray(result['keypoint_scores'])
        highest[name] = float(scores.max())
        drawn += int((scores >= kpt_thr).sum())
    return {'highest on the grey wall': highest['grey wall'],
            f'highest on {len(photos) - 1} package photos': max(v for k, v in highest.items() if k != 'grey wall'),
            f'keypoints drawn@{kpt_thr} in all': drawn}


def foreground_scores(task, people: List[Person], root: str, foreground) -> Dict[str, float]:
    """Mean person-foreground IoU (over the photos whose people all have polygons) of ``foreground(result)`` and of
    the box-filled mask."""
    model, boxed = [], []
    for name, persons in by_image(people).items():
        if any(p.polygons is None for p in persons):
            continue
        image = cv2.imread(osp.join(root, 'images', name))
        truth = polygon_mask([poly for p in persons for poly in p.polygons], image.shape)
        model.append(iou(foreground(task.predict([image])[0]), truth))
        boxed.append(iou(box_mask(np.stack([p.bbox for p in persons]), image.shape), truth))
    return {'IoU': float(np.mean(model)), 'box IoU': float(np.mean(boxed)), 'photos': len(model)}


FOREGROUND = {'seg': lambda result: result['labels'] > 0, 'matting': lambda result: result['alpha'] >= 0.5}


def class_iou(pairs, num_classes: int, ignore_index: int = 255) -> np.ndarray:
    """(num_classes, ) IoU of each class over (prediction, truth) label maps, intersections and unions summed over
    the pairs (mmseg's IoUMetric); truth pixels at ``ignore_index`` are not scored; NaN for a class in neither."""
    import torch
    from mmseg.evaluation.metrics import IoUMetric
    intersection, union = np.zeros(num_classes), np.zeros(num_classes)
    for pred, truth in pairs:
        area = IoUMetric.intersect_and_union(torch.from_numpy(np.asarray(pred, np.int64)),
                                             torch.from_numpy(np.asarray(truth, np.int64)), num_classes, ignore_index)
        intersection += area[0].numpy()
        union += area[1].numpy()
    with np.errstate(invalid='ignore', divide='ignore'):
        return np.where(union > 0, intersection / union, np.nan)


def ccp_samples(root: str) -> List[str]:
    """The names of the held-out CCP photos in ``<root>/val`` (``rgb/<name>.jpg``, ``seg/`` and ``alpha/`` PNGs)."""
    folders = [osp.join(root, 'val', sub) for sub in ('rgb', 'seg', 'alpha')]
    if not all(osp.isdir(folder) for folder in folders):
        raise SystemExit(f'--ccp {root}: no val/rgb, val/seg and val/alpha there; make them with '
                         'tools/dataset_converters/ccp_to_bodyparts.py --src <clothing-co-parsing> --out DIR')
    names = sorted(osp.splitext(f)[0] for f in os.listdir(folders[0]) if f.endswith('.jpg'))
    missing = [n for n in names if not all(osp.isfile(osp.join(folders[i], f'{n}.png')) for i in (1, 2))]
    if not names or missing:
        raise SystemExit(f'--ccp {root}: {len(missing)} of {len(names)} photos in val/rgb lack their val/seg or '
                         f'val/alpha PNG (e.g. {missing[:3]}); rerun ccp_to_bodyparts.py to complete them')
    return names


def bounding_box_mask(mask: np.ndarray) -> np.ndarray:
    """The bounding box of a (H, W) bool mask, filled (all False for an empty mask)."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    box = np.zeros_like(mask, bool)
    if rows.size:
        box[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1] = True
    return box


def ccp_scores(task, root: str, foreground, class_names: Optional[Sequence[str]] = None) -> Dict[str, float]:
    """Person IoU on the CCP held-out photos (mean over photos), of the model's ``foreground(result)`` and of the
    true person's bounding box; with ``class_names`` (seg) also ``IoU <class>`` of every class CCP's maps hold."""
    person_iou, boxed, pairs = [], [], []
    for name in ccp_samples(root):
        image = cv2.imread(osp.join(root, 'val', 'rgb', f'{name}.jpg'))
        truth = cv2.imread(osp.join(root, 'val', 'alpha', f'{name}.png'), cv2.IMREAD_GRAYSCALE) > 127
        result = task.predict([image])[0]
        person_iou.append(iou(foreground(result), truth))
        boxed.append(iou(bounding_box_mask(truth), truth))
        if class_names is not None:
            labels = cv2.imread(osp.join(root, 'val', 'seg', f'{name}.png'), cv2.IMREAD_UNCHANGED)
            pairs.append((np.asarray(result['labels']), labels))
    scores = {'IoU': float(np.mean(person_iou)), 'box IoU': float(np.mean(boxed)), 'photos': len(person_iou)}
    if class_names is not None:
        present = np.unique(np.concatenate([truth[truth != 255] for _, truth in pairs]))
        per_class = class_iou(pairs, len(class_names))
        scores.update({f'IoU {class_names[c]}': float(per_class[c]) for c in present})
    return scores


def seg_class_names(task) -> List[str]:
    """The class names of a seg inference task's model (its layout; the 29 classes by default)."""
    from sapiens2.structures import layout
    model = task.model
    names = layout.class_names(getattr(model, 'dataset_meta', None), model.decode_head.num_classes)
    return names or [str(c) for c in range(model.decode_head.num_classes)]


def build_task(model: str, weights: Optional[str], device: str):
    from sapiens2.apis import Sapiens2Inferencer
    # fp32: the figures in the docs (the default is auto)
    # the photos without a person are posed as one whole-photo box (no person finder), as documented above
    return Sapiens2Inferencer(model, weights, device=device, dtype='fp32',
                              task_options=dict(pose=dict(person_finder=None))).tasks[0]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    for task, alias in (('pose', 'pose-tiny'), ('seg', 'seg-tiny'), ('matting', 'matting-tiny')):
        parser.add_argument(f'--{task}', default=alias, help=f'alias or config (default {alias}); "none" skips it')
        parser.add_argument(f'--{task}-weights', default=None, help='checkpoint for a config (default: the alias\')')
    parser.add_argument('--data', default=DATA, help='folder with gt_body12.json, gt_coco17.json and images/')
    parser.add_argument('--lspet', default=None,
                        help=f'an LSP-Extended folder (images/, {LSPET_VAL} from lspet_to_coco.py): its held-out '
                        'people too')
    parser.add_argument('--ccp', default=None,
                        help='the converted Clothing Co-Parsing folder (tools/dataset_converters/ccp_to_bodyparts.py '
                        '--out): seg and matting on its val/ split too')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--kpt-thr', type=float, default=None,
                        help='keypoint score threshold of the "drawn" share (default: the pose task\'s, as '
                        'sapiens2-infer draws)')
    args = parser.parse_args(argv)
    people = load_people(args.data)
    print(f'{len(people)} people in {len(by_image(people))} photos ({args.data}); {os.cpu_count()} cores, '
          f'load average {os.getloadavg()[0]:.1f}')
    if args.pose != 'none':
        sets = [('', people, args.data)]
        if osp.isfile(osp.join(args.data, 'gt_coco17.json')):
            coco_people = load_people(args.data, 'gt_coco17.json')
            sets.append((f', {len(coco_people)} COCO people in {len(by_image(coco_people))} photos (gt_coco17.json)',
                         coco_people, args.data))
        if args.lspet:
            lspet = load_lspet_people(args.lspet)
            sets.append((f', LSPET held-out ({len(lspet)} people, {args.lspet})', lspet, args.lspet))
        task = build_task(args.pose, args.pose_weights, args.device)
        for label, persons, root in sets:
            start = time.perf_counter()
            scores = pose_scores(task, persons, root, args.kpt_thr)
            per_joint = {k: scores.pop(k) for k in list(scores) if k.endswith(JOINTS)}
            print(f'pose {args.pose}{label}: ' + ', '.join(f'{k} {v:.3f}' for k, v in scores.items()) +
                  f' ({time.perf_counter() - start:.1f} s)')
            print('  per joint: ' + ', '.join(f'{k} {v:.2f}' for k, v in per_joint.items()))
        empty = empty_photo_scores(task, args.kpt_thr)
        print(f'pose {args.pose}, photos without a person: ' + ', '.join(f'{k} {v:.3f}' if isinstance(v, float) else
                                                                       f'{k} {v}' for k, v in empty.items()))
        if not args.lspet:
            print('LSPET held-out: skipped (--lspet DIR not given: an LSP-Extended folder converted by '
                  'tools/dataset_converters/lspet_to_coco.py)')
    for task in ('seg', 'matting'):
        model = getattr(args, task)
        if model == 'none':
            continue
        start = time.perf_counter()
        inference = build_task(model, getattr(args, f'{task}_weights'), args.device)
        scores = foreground_scores(inference, people, args.data, FOREGROUND[task])
        print(f'{task} {model}: person-foreground IoU {scores["IoU"]:.3f}, box-filled mask {scores["box IoU"]:.3f} '
              f'(mean over {scores["photos"]} photos with polygons; {time.perf_counter() - start:.1f} s)')
        if args.ccp is None:
            print(f'{task} {model} on CCP held-out: skipped (give --ccp DIR, made by '
                  'tools/dataset_converters/ccp_to_bodyparts.py)')
            continue
        start = time.perf_counter()
        classes = seg_class_names(inference) if task == 'seg' else None
        scores = ccp_scores(inference, args.ccp, FOREGROUND[task], classes)
        per_class = {k[4:]: v for k, v in scores.items() if k.startswith('IoU ')}
        print(f'{task} {model} on CCP held-out: person IoU {scores["IoU"]:.3f}, bounding box {scores["box IoU"]:.3f} '
              f'(mean over {scores["photos"]} photos; {time.perf_counter() - start:.1f} s)')
        if per_class:
            print('  per class: ' + ', '.join(f'{k} {v:.3f}' for k, v in per_class.items()) +
                  f' (mIoU {np.nanmean(list(per_class.values())):.3f})')


if __name__ == '__main__':
    main()
