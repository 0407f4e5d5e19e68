"""Convert LSP-Extended (Johnson and Everingham, CVPR 2011) to COCO-style keypoint files in the 308-keypoint layout.

LSPET: 10,000 Flickr photos (``images/im00001.jpg`` ...), one person each, and ``joints.mat``: 14 joints x (x, y,
flag) x 10,000 (older copies store it 10,000 x 14 x 3; both are read). The flag is 1 for a labelled joint and 0 for
one left out, whose coordinates are then off the image (negative), so flag 0 becomes visibility 0 (no loss) and
flag 1 visibility 2. The 12 limb joints and the neck go to the 308 points of the same name; **head top has no 308
counterpart**: it is not a keypoint of the output, but it widens the person box (the labelled joints' extent plus
``--margin`` of it on each side, clipped to the image), so that the box holds the head. Every other 308 point is
unlabelled (0, 0, 0); a teacher can add them (``mediapipe_teacher.py --merge``).

Writes ``<out>/lspet_keypoints308_train.json`` and ``<out>/lspet_keypoints308_val.json``: the held-out split is the
last ``--num-val`` images (deterministic), ``file_name`` is ``images/imNNNNN.jpg`` (data_root: the LSPET folder).
Existing files are not replaced. Example:

    python tools/dataset_converters/lspet_to_coco.py --lspet data/lspet --out data/lspet/annotations
"""
import argparse
import json
import os.path as osp
import sys
from typing import Dict, List, Sequence, Tuple

import numpy as np

from sapiens2.metainfo import load_metainfo
from sapiens2.utils.atomic_save import atomic_write_text
from sapiens2.utils.cli_errors import add_debug_argument, run_cli

# joints.mat's order (the dataset's README.txt); None: no 308 counterpart (head top: used for the box only)
LSPET_JOINTS: Tuple[Tuple[str, object], ...] = (
    ('right ankle', 'right_ankle'), ('right knee', 'right_knee'), ('right hip', 'right_hip'),
    ('left hip', 'left_hip'), ('left knee', 'left_knee'), ('left ankle', 'left_ankle'),
    ('right wrist', 'right_wrist'), ('right elbow', 'right_elbow'), ('right shoulder', 'right_shoulder'),
    ('left shoulder', 'left_shoulder'), ('left elbow', 'left_elbow'), ('left wrist', 'left_wrist'),
    ('neck', 'neck'), ('head top', None))
SPLITS = ('train', 'val')


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Convert LSP-Extended to COCO-style 308-keypoint files.')
    parser.add_argument('--lspet', required=True, help='the LSPET folder (joints.mat, images/)')
    parser.add_argument('--out', required=True, help='output folder (existing files are not replaced)')
    parser.add_argument('--num-val', type=int, default=500, help='the last N images are the held-out split')
    parser.add_argument('--margin', type=float, default=0.1,
                        help='the person box: the labelled joints\' extent plus this share of it on each side')
    add_debug_argument(parser)
    return parser.parse_args(argv)


def read_joints(path: str) -> np.ndarray:
    """(N, 14, 3) x, y, flag from an LSPET ``joints.mat`` (14 x 3 x N or N x 14 x 3)."""
    from scipy.io import loadmat
    try:
        joints = np.asarray(loadmat(path)['joints'], np.float64)
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(f'{path}: not an LSPET joints.mat with a "joints" matrix ({err})') from err
    if joints.ndim == 3 and joints.shape[:2] == (len(LSPET_JOINTS), 3):
        return joints.transpose(2, 0, 1)
    if joints.ndim == 3 and joints.shape[1:] == (len(LSPET_JOINTS), 3):
        return joints
    raise ValueError(f'{path}: "joints" is {joints.shape}, expected 14 x 3 x N or N x 14 x 3 (LSPET\'s 14 joints)')


def keypoint_columns(names: Sequence[str]) -> List[Tuple[int, int]]:
    """(LSPET joint, 308 index) for each LSPET joint that has a 308 counterpart, found by name."""
    index = {name: i for i, name in enumerate(names)}
    return [(j, index[target]) for j, (_, target) in enumerate(LSPET_JOINTS) if target is not None]


def person_box(joints: np.ndarray, width: int, height: int, margin: float) -> List[float]:
    """xywh: the extent of the labelled joints (head top included) plus ``margin`` of it on each side, in the image."""
    xy = joints[joints[:, 2] > 0, :2]
    low, high = xy.min(axis=0), xy.max(axis=0)
    pad = (high - low) * margin
    x1, y1 = np.maximum(low - pad, 0)
    x2, y2 = np.minimum(high + pad, [width, height])
    return [float(x1), float(y1), float(x2 - x1), float(y2 - y1)]


def annotation(joints: np.ndarray, columns: List[Tuple[int, int]], num_keypoints: int, box: List[float],
               ann_id: int) -> dict:
    keypoints = np.zeros((num_keypoints, 3))
    for joint, column in columns:
        if joints[joint, 2] > 0:
            keypoints[column] = (*joints[joint, :2], 2)
    return dict(id=ann_id, image_id=ann_id, category_id=1, bbox=[round(v, 2) for v in box],
                area=round(box[2] * box[3], 2), iscrowd=0, num_keypoints=int((keypoints[:, 2] > 0).sum()),
                keypoints=[round(float(v), 2) for v in keypoints.reshape(-1)])


def convert(joints: np.ndarray, sizes: Sequence[Tuple[int, int]], num_val: int, margin: float = 0.1
            ) -> Dict[str, dict]:
    """{split: COCO dict} from (N, 14, 3) joints and the images' (width, height); image i is ``imNNNNN.jpg``
    (1-based, five digits). A person without a labelled joint is left out (with a warning line)."""
    metainfo = load_metainfo('keypoints308.json')
    names = metainfo['keypoint_names']
    columns = keypoint_columns(names)
    if not 0 <= num_val < len(joints):
        raise ValueError(f'--num-val {num_val}: must be at least 0 and below the {len(joints)} images')
    category = dict(id=1, name='person', keypoints=names, skeleton=[])
    splits = {split: dict(images=[], annotations=[], categories=[category]) for split in SPLITS}
    skipped = []
    for i, (person, (width, height)) in enumerate(zip(joints, sizes)):
        if not (person[:, 2] > 0).any():
            skipped.append(i + 1)
            continue
        split = splits['val' if i >= len(joints) - num_val else 'train']
        split['images'].append(dict(id=i + 1, file_name=f'images/im{i + 1:05d}.jpg', width=int(width),
                                    height=int(height)))
        split['annotations'].append(annotation(person, columns, len(names), person_box(person, width, height, margin),
                                               i + 1))
    if skipped:
        print(f'left out {len(skipped)} people without a labelled joint (images {skipped[:10]}...)')
    return splits


def image_sizes(folder: str, count: int) -> List[Tuple[int, int]]:
    """(width, height) of ``folder/imNNNNN.jpg`` for 1..count (the header only)."""
    from PIL import Image
    sizes = []
    for i in range(1, count + 1):
        path = osp.join(folder, f'im{i:05d}.jpg')
        if not osp.isfile(path):
            raise FileNotFoundError(f'{path}: missing; joints.mat has {count} people and each needs its image')
        with Image.open(path) as image:
            sizes.append(image.size)
    return sizes


def main(argv=None) -> None:
    args = parse_args(argv)
    joints = read_joints(osp.join(args.lspet, 'joints.mat'))
    outputs = {split: osp.join(args.out, f'lspet_keypoints308_{split}.json') for split in SPLITS}
    for path in outputs.values():
        if osp.exists(path):
            raise FileExistsError(f'{path} exists; choose another --out (nothing there is replaced)')
    splits = convert(joints, image_sizes(osp.join(args.lspet, 'images'), len(joints)), args.num_val, args.margin)
    for split, path in outputs.items():
        atomic_write_text(path, json.dumps(splits[split]))
        print(f'{path}: {len(splits[split]["annotations"])} people')


if __name__ == '__main__':
    sys.exit(run_cli(main))
