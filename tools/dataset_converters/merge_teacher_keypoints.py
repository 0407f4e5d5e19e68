"""Add a teacher's keypoints to human labels: both COCO-style files in the 308-keypoint layout, one person per photo.

The human labels win wherever they label a point; a point they leave unlabelled (visibility 0) takes the teacher's
where the teacher labels it (``mediapipe_teacher.py`` writes only its confident points). The teacher's person must be
the labelled one: where the two label the same points, their median distance must be at most ``--max-disagreement``
x the longer side of the label's box, or the photo keeps its labels alone (a teacher that found someone else, or got
the pose wrong, adds nothing). The box grows to hold the points added (by the same margin, clipped to the image).

    python tools/dataset_converters/merge_teacher_keypoints.py \\
        --labels data/lspet/annotations/lspet_keypoints308_train.json \\
        --teacher data/lspet/teacher/teacher_keypoints308.json --out data/lspet/annotations/lspet_teacher_train.json
"""
import argparse
import json
import os.path as osp
import sys
from collections import Counter
from typing import Dict, Optional, Tuple

import numpy as np

from sapiens2.utils.atomic_save import atomic_write_text
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Add a teacher\'s keypoints to human labels (308 layout).')
    parser.add_argument('--labels', required=True, help='the human labels (COCO-style, 308 keypoints)')
    parser.add_argument('--teacher', required=True, help='the teacher\'s file (mediapipe_teacher.py)')
    parser.add_argument('--out', required=True, help='the merged file (an existing file is not replaced)')
    parser.add_argument('--max-disagreement', type=float, default=0.1,
                        help='median distance over the points both label, x the box\'s longer side, above which '
                        'the teacher is not used for that photo')
    parser.add_argument('--margin', type=float, default=0.1, help='the box\'s margin around the points added')
    add_debug_argument(parser)
    return parser.parse_args(argv)


def merge_person(labels: np.ndarray, teacher: np.ndarray, box, size: Tuple[int, int], max_disagreement: float,
                 margin: float = 0.1) -> Tuple[Optional[np.ndarray], list]:
    """(merged (K, 3), box) of one person's labels and the teacher's points (both (K, 3)); merged is None when the
    teacher disagrees (or shares no point with the labels)."""
    both = (labels[:, 2] > 0) & (teacher[:, 2] > 0)
    if not both.any():
        return None, box
    distance = np.median(np.linalg.norm(labels[both, :2] - teacher[both, :2], axis=1))
    if distance > max_disagreement * max(box[2], box[3]):
        return None, box
    added = (labels[:, 2] <= 0) & (teacher[:, 2] > 0)
    merged = labels.copy()
    merged[added] = teacher[added]
    if added.any():
        corner, far = np.array(box[:2], np.float64), np.array(box[:2], np.float64) + box[2:4]
        low = np.minimum(teacher[added, :2].min(axis=0), corner)
        high = np.maximum(teacher[added, :2].max(axis=0), far)
        extent = (high - low) * margin  # only the sides that the added points pass get a margin
        low, high = np.maximum(low - extent * (low < corner), 0), np.minimum(high + extent * (high > far), size)
        box = [float(low[0]), float(low[1]), float(high[0] - low[0]), float(high[1] - low[1])]
    return merged, box


def merge(labels: dict, teacher: dict, max_disagreement: float, margin: float = 0.1) -> Tuple[dict, Counter]:
    """The labels' COCO dict with the teacher's points added, and counts (``merged``, ``disagreed``, ``no teacher``,
    ``points added``)."""
    teacher_images = {image['id']: image['file_name'] for image in teacher['images']}
    by_name: Dict[str, dict] = {teacher_images[ann['image_id']]: ann for ann in teacher['annotations']}
    images = {image['id']: image for image in labels['images']}
    counts: Counter = Counter()
    annotations = []
    for ann in labels['annotations']:
        image = images[ann['image_id']]
        found = by_name.get(image['file_name'])
        if found is None:
            counts['no teacher'] += 1
            annotations.append(ann)
            continue
        label_points = np.asarray(ann['keypoints'], np.float64).reshape(-1, 3)
        teacher_points = np.asarray(found['keypoints'], np.float64).reshape(-1, 3)
        if teacher_points.shape != label_points.shape:
            raise ValueError(f'teacher annotation {found["id"]} has {len(teacher_points)} keypoints, the labels '
                             f'{len(label_points)}: both files must be in the same layout')
        merged, box = merge_person(label_points, teacher_points, ann['bbox'], (image['width'], image['height']),
                                   max_disagreement, margin)
        if merged is None:
            counts['disagreed'] += 1
            annotations.append(ann)
            continue
        counts['merged'] += 1
        counts['points added'] += int((merged[:, 2] > 0).sum() - (label_points[:, 2] > 0).sum())
        annotations.append(dict(ann, bbox=[round(v, 2) for v in box], area=round(box[2] * box[3], 2),
                                num_keypoints=int((merged[:, 2] > 0).sum()),
                                keypoints=[round(float(v), 2) for v in merged.reshape(-1)]))
    return dict(labels, annotations=annotations), counts


def main(argv=None) -> None:
    args = parse_args(argv)
    if osp.exists(args.out):
        raise FileExistsError(f'{args.out} exists; choose another --out (nothing there is replaced)')
    with open(args.labels) as f:
        labels = json.load(f)
    with open(args.teacher) as f:
        teacher = json.load(f)
    merged, counts = merge(labels, teacher, args.max_disagreement, args.margin)
    atomic_write_text(args.out, json.dumps(merged))
    print(f'{args.out}: {len(merged["annotations"])} people; the teacher added {counts["points added"]} points to '
          f'{counts["merged"]}, disagreed on {counts["disagreed"]}, had no person for {counts["no teacher"]}')


if __name__ == '__main__':
    sys.exit(run_cli(main))
