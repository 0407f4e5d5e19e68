"""Turn a teacher's soft person masks on real photos into matting and seg training folders.

``mediapipe_teacher.py`` writes one soft mask per photo where it found a person (``masks/<stem>.png``, probability x
255). Matting takes them as alpha mattes; seg takes the sure background: a pixel whose probability is below
``--background`` is class 0, every other pixel 255 (ignored: the mask says person, not which part). The photos are
those of a COCO-style split file (e.g. LSPET's training split, so the held-out photos stay unseen); photos without
a mask are left out.

    python tools/dataset_converters/teacher_masks_to_dense.py \\
        --split data/lspet/annotations/lspet_keypoints308_train.json --images data/lspet \\
        --masks data/lspet/teacher/masks --out data/lspet_teacher_dense

Writes ``<out>/rgb/<stem>.jpg`` (the photo's bytes), ``<out>/alpha/<stem>.png`` and ``<out>/seg/<stem>.png``, the
layout of ``MattingDirDataset`` and of a seg dataset with ``data_prefix=dict(img_path='rgb', seg_map_path='seg')``.
Existing files are kept, so a stopped run goes on where it stopped.
"""
import argparse
import json
import os
import os.path as osp
import sys
from typing import List, Tuple

import numpy as np

from sapiens2.utils.cli_errors import add_debug_argument, run_cli

IGNORE = 255


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='A teacher\'s person masks as matting and seg training folders.')
    parser.add_argument('--split', required=True, help='COCO-style file whose images are converted (file_name)')
    parser.add_argument('--images', required=True, help='folder the file_names are relative to')
    parser.add_argument('--masks', required=True, help='the teacher\'s masks/ folder (<stem>.png)')
    parser.add_argument('--out', required=True, help='output folder (existing files are kept, not replaced)')
    parser.add_argument('--background', type=float, default=0.05,
                        help='person probability below which a pixel is seg background (the rest is ignored)')
    add_debug_argument(parser)
    return parser.parse_args(argv)


def background_labels(alpha: np.ndarray, background: float) -> np.ndarray:
    """(H, W) uint8 seg labels of a (H, W) uint8 soft mask: 0 where the probability is below ``background``, else
    ``IGNORE``."""
    return np.where(alpha < background * 255, 0, IGNORE).astype(np.uint8)


def split_photos(split: str, images: str, masks: str) -> Tuple[List[Tuple[str, str, str]], int]:
    """([(stem, photo path, mask path)] of the split's photos that have a mask, number without one)."""
    try:
        with open(split) as f:
            file_names = [image['file_name'] for image in json.load(f)['images']]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f'--split {split}: not a readable COCO-style file with images[].file_name ({err})') from None
    if not osp.isdir(masks):
        raise FileNotFoundError(f'--masks {masks}: no such folder; give the masks/ folder mediapipe_teacher.py wrote')
    found, missing = [], 0
    for file_name in file_names:
        stem = osp.splitext(osp.basename(file_name))[0]
        mask = osp.join(masks, f'{stem}.png')
        if osp.isfile(mask):
            found.append((stem, osp.join(images, file_name), mask))
        else:
            missing += 1
    return found, missing


def convert_one(stem: str, photo: str, mask: str, out: str, background: float) -> bool:
    """Write the photo, its alpha and its seg labels; False when all three are there already."""
    import cv2

    from sapiens2.utils.atomic_save import atomic_write_bytes
    from sapiens2.utils.image_write import write_image
    paths = {sub: osp.join(out, sub, f'{stem}{ext}') for sub, ext in (('rgb', '.jpg'), ('alpha', '.png'),
                                                                       ('seg', '.png'))}
    if all(osp.isfile(p) for p in paths.values()):
        return False
    if not osp.isfile(photo):
        raise FileNotFoundError(f'{photo}: no such photo; --images must be the folder the split\'s file_names are '
                                'relative to')
    alpha = cv2.imread(mask, cv2.IMREAD_GRAYSCALE)
    with open(photo, 'rb') as f:
        data = f.read()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if alpha is None or image is None or image.shape[:2] != alpha.shape:
        raise ValueError(f'{photo} and {mask}: cannot be read, or not of one size; are --images and --masks the '
                         'photos the teacher labelled?')
    outputs = dict(rgb=data, alpha=alpha, seg=background_labels(alpha, background))
    for sub, path in paths.items():
        if osp.isfile(path):
            continue
        os.makedirs(osp.dirname(path), exist_ok=True)
        if sub == 'rgb':
            atomic_write_bytes(path, outputs[sub])
        else:
            write_image(path, outputs[sub])
    return True


def main(argv=None) -> None:
    args = parse_args(argv)
    if not 0 < args.background < 1:
        raise ValueError(f'--background {args.background}: give a probability between 0 and 1 (e.g. 0.05)')
    photos, missing = split_photos(args.split, args.images, args.masks)
    written = sum(convert_one(*photo, args.out, args.background) for photo in photos)
    print(f'{len(photos)} photos with a teacher mask in {args.out} ({written} written, the rest were there); '
          f'{missing} of the split have no mask and are left out')


if __name__ == '__main__':
    sys.exit(run_cli(main))
