"""Label the people of a folder of photos with MediaPipe Holistic, a teacher trained on real people: its points in
the 308-keypoint layout (a COCO-style file) and its soft person masks (PNG).

The points LSPET and other real-photo sets lack (face, feet, hands) and the person masks they have none of come from
MediaPipe 0.10.21 (Apache-2.0; BlazePose, face mesh, hands and the pose's segmentation, all inside the wheel). The
mapping of its 33 body, 468 (+10 iris) face and 2 x 21 hand points to the 308 names is the table
``mediapipe_keypoints308.json`` beside this file. A point's visibility is 2 where MediaPipe is confident and 0
elsewhere: a body point by its own visibility score (``--min-visibility``); the face points by the nose's, each hand's
by its wrist's (the face and hand models give no per-point score), and only where that model found the face or hand.

mediapipe pins numpy<2 and protobuf<5, so this runs in its own venv (``make teacher-deps``: .venv-teacher) and imports
nothing of sapiens2; it is a training-data tool, never needed by the package or its tests:

    .venv-teacher/bin/python tools/dataset_converters/mediapipe_teacher.py --images data/lspet/images \\
        --out data/lspet/teacher

Writes ``<out>/teacher.jsonl`` as it goes (one line per photo: a rerun after a kill goes on where it stopped),
``<out>/masks/<stem>.png`` (the person's probability x 255; none where no person was found) and at the end
``<out>/teacher_keypoints308.json`` (``file_name``: ``<--file-prefix><name>``, default the folder's name, e.g.
``images/im00001.jpg`` as ``lspet_to_coco.py`` writes them; one person per photo, the one MediaPipe found).
``merge_teacher_keypoints.py`` adds its points to human labels.
"""
import argparse
import json
import os
import os.path as osp
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

HERE = osp.dirname(osp.abspath(__file__))
TABLE = osp.join(HERE, 'mediapipe_keypoints308.json')
KEYPOINTS308 = osp.join(HERE, '..', '..', 'sapiens2', 'metainfo', 'keypoints308.json')
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png')
PARTS = ('pose', 'face', 'left_hand', 'right_hand')
NOSE, LEFT_WRIST, RIGHT_WRIST = 0, 15, 16  # BlazePose indices gating the face and the hands


def load_table(table: str = TABLE, metainfo: str = KEYPOINTS308) -> Dict[str, List[Tuple[int, int]]]:
    """{part: [(MediaPipe index, 308 index)]} for ``pose``, ``face``, ``left_hand`` and ``right_hand``; a name that
    is not a 308 keypoint or a 308 point taken twice is a ``ValueError``."""
    with open(table) as f:
        spec = json.load(f)
    with open(metainfo) as f:
        index = {name: i for i, name in enumerate(json.load(f)['keypoint_names'])}
    names = dict(pose=spec['pose'], face=spec['face'],
                 left_hand={k: f'left_{v}' for k, v in spec['hand'].items()},
                 right_hand={k: f'right_{v}' for k, v in spec['hand'].items()})
    columns, taken = {}, {}
    for part, mapping in names.items():
        columns[part] = []
        for source, name in mapping.items():
            if name not in index:
                raise ValueError(f'{table}: {part} point {source} maps to {name!r}, which is not a 308 keypoint')
            if name in taken:
                raise ValueError(f'{table}: {name!r} is taken twice ({taken[name]} and {part} {source})')
            taken[name] = f'{part} {source}'
            columns[part].append((int(source), index[name]))
    return columns


def landmark_array(landmarks) -> Optional[np.ndarray]:
    """(N, 3) normalised x, y and visibility of a MediaPipe landmark list (None when the model found nothing)."""
    if landmarks is None:
        return None
    return np.array([(p.x, p.y, getattr(p, 'visibility', 0.0)) for p in landmarks.landmark], np.float64)


def keypoints308(result, width: int, height: int, columns: Dict[str, List[Tuple[int, int]]],
                 min_visibility: float = 0.5, num_keypoints: int = 308) -> Optional[np.ndarray]:
    """(308, 3) pixel x, y, visibility (2 or 0) from a Holistic result (``pose_landmarks``, ``face_landmarks``,
    ``left_hand_landmarks``, ``right_hand_landmarks``); None when no person was found."""
    pose = landmark_array(result.pose_landmarks)
    if pose is None:
        return None
    gates = dict(pose=None, face=pose[NOSE, 2], left_hand=pose[LEFT_WRIST, 2], right_hand=pose[RIGHT_WRIST, 2])
    points = dict(pose=pose, face=landmark_array(result.face_landmarks),
                  left_hand=landmark_array(result.left_hand_landmarks),
                  right_hand=landmark_array(result.right_hand_landmarks))
    keypoints = np.zeros((num_keypoints, 3))
    for part in PARTS:
        found = points[part]
        if found is None or (gates[part] is not None and gates[part] < min_visibility):
            continue
        for source, column in columns[part]:
            if source >= len(found):
                continue  # the iris points of a face mesh run without refine_face_landmarks
            x, y, visibility = found[source]
            inside = 0 <= x <= 1 and 0 <= y <= 1
            confident = visibility >= min_visibility if part == 'pose' else True
            if inside and confident:
                keypoints[column] = (x * width, y * height, 2)
    return keypoints


def person_box(keypoints: np.ndarray, width: int, height: int, margin: float = 0.1) -> List[float]:
    """xywh: the extent of the labelled points plus ``margin`` of it on each side, clipped to the image."""
    xy = keypoints[keypoints[:, 2] > 0, :2]
    low, high = xy.min(axis=0), xy.max(axis=0)
    pad = (high - low) * margin
    x1, y1 = np.maximum(low - pad, 0)
    x2, y2 = np.minimum(high + pad, [width, height])
    return [float(x1), float(y1), float(x2 - x1), float(y2 - y1)]


def record(name: str, width: int, height: int, keypoints: Optional[np.ndarray]) -> dict:
    """One line of teacher.jsonl."""
    line = dict(name=name, width=width, height=height)
    if keypoints is not None and (keypoints[:, 2] > 0).any():
        line['keypoints'] = [round(float(v), 2) for v in keypoints.reshape(-1)]
    return line


def coco_file(records: Sequence[dict], file_prefix: str, names: Sequence[str]) -> dict:
    """The COCO-style file of teacher.jsonl's lines: every photo, one person where MediaPipe found one."""
    images, annotations = [], []
    for i, line in enumerate(records, 1):
        images.append(dict(id=i, file_name=file_prefix + line['name'], width=line['width'], height=line['height']))
        if 'keypoints' in line:
            keypoints = np.asarray(line['keypoints']).reshape(-1, 3)
            box = person_box(keypoints, line['width'], line['height'])
            annotations.append(dict(id=i, image_id=i, category_id=1, bbox=[round(v, 2) for v in box],
                                    area=round(box[2] * box[3], 2), iscrowd=0,
                                    num_keypoints=int((keypoints[:, 2] > 0).sum()), keypoints=line['keypoints']))
    return dict(images=images, annotations=annotations,
                categories=[dict(id=1, name='person', keypoints=list(names), skeleton=[])])


def read_records(path: str) -> List[dict]:
    """The complete lines of a teacher.jsonl (a line cut short by a kill is dropped: its photo is redone)."""
    records = []
    if osp.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    break
    return records


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--images', required=True, help='a folder of photos (.jpg, .jpeg, .png)')
    parser.add_argument('--out', required=True, help='output folder (teacher.jsonl, masks/, the COCO file)')
    parser.add_argument('--file-prefix', default=None,
                        help='put before each file name in the COCO file (default: the folder\'s name and /)')
    parser.add_argument('--num', type=int, default=None, help='only the first N photos (sorted by name)')
    parser.add_argument('--min-visibility', type=float, default=0.5, help='a body point\'s visibility score to keep')
    parser.add_argument('--model-complexity', type=int, default=1, choices=(0, 1, 2), help='BlazePose\'s model')
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> None:
    import cv2
    import mediapipe as mp
    columns = load_table()
    with open(KEYPOINTS308) as f:
        names = json.load(f)['keypoint_names']
    photos = sorted(n for n in os.listdir(args.images) if n.lower().endswith(IMAGE_EXTENSIONS))[:args.num]
    if not photos:
        raise ValueError(f'{args.images}: no .jpg, .jpeg or .png photo in it')
    os.makedirs(osp.join(args.out, 'masks'), exist_ok=True)
    jsonl = osp.join(args.out, 'teacher.jsonl')
    records = read_records(jsonl)
    with open(jsonl, 'w') as f:  # direct write: .venv-teacher has no sapiens2
        f.writelines(json.dumps(line) + '\n' for line in records)
    done = {line['name'] for line in records}
    start, found = time.perf_counter(), 0
    holistic = mp.solutions.holistic.Holistic(static_image_mode=True, model_complexity=args.model_complexity,
                                              enable_segmentation=True, refine_face_landmarks=True)
    with holistic, open(jsonl, 'a') as out:  # direct write: .venv-teacher has no sapiens2
        todo = [name for name in photos if name not in done]
        for n, name in enumerate(todo, 1):
            image = cv2.imread(osp.join(args.images, name))
            if image is None:
                raise ValueError(f'{args.images}/{name}: not a readable image')
            height, width = image.shape[:2]
            result = holistic.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
            line = record(name, width, height, keypoints308(result, width, height, columns, args.min_visibility))
            if result.segmentation_mask is not None and 'keypoints' in line:
                mask = np.clip(result.segmentation_mask * 255 + 0.5, 0, 255).astype(np.uint8)
                mask_path = osp.join(args.out, 'masks', osp.splitext(name)[0] + '.png')
                cv2.imwrite(mask_path, mask)  # direct write: .venv-teacher has no sapiens2
            out.write(json.dumps(line) + '\n')
            out.flush()
            records.append(line)
            found += 'keypoints' in line
            if n % 200 == 0 or n == len(todo):
                print(f'{n}/{len(todo)} photos, a person in {found}, {(time.perf_counter() - start) / n:.3f} s each',
                      flush=True)
    order = {name: i for i, name in enumerate(photos)}
    records = sorted((line for line in records if line['name'] in order), key=lambda line: order[line['name']])
    prefix = args.file_prefix if args.file_prefix is not None else osp.basename(osp.normpath(args.images)) + '/'
    coco = osp.join(args.out, 'teacher_keypoints308.json')
    with open(coco + '.part', 'w') as f:  # direct write: .venv-teacher has no sapiens2
        json.dump(coco_file(records, prefix, names), f)
    os.replace(coco + '.part', coco)  # direct write: .venv-teacher has no sapiens2
    print(f'{coco}: {sum("keypoints" in line for line in records)} people in {len(records)} photos')


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        run(args)
    except (OSError, ValueError) as err:
        print(f'mediapipe_teacher.py: error: {err}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
