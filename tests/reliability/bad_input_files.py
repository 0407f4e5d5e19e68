"""Small valid input files for the bad-input and fuzz tests (mutated by the tests)."""
from pathlib import Path

import cv2
import numpy as np

H, W = 64, 48


def write_image(path: Path, value: int = 128) -> str:
    """A uniform HxW BGR PNG at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.full((H, W, 3), value, np.uint8))
    return str(path)


def coco_annotation(num_keypoints: int = 308, bbox=(4, 4, 30, 50), **ann) -> dict:
    """A COCO-style 308-keypoint document: one image ``rgb/0.png`` and one person annotation."""
    keypoints = [v for i in range(num_keypoints) for v in (10 + i % 20, 10 + i % 40, 2)]
    return dict(images=[dict(id=1, file_name='rgb/0.png', width=W, height=H)],
                annotations=[dict(id=1, image_id=1, category_id=1, bbox=list(bbox), keypoints=keypoints, **ann)],
                categories=[dict(id=1, name='person')])

