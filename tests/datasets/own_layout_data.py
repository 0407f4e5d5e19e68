"""Small mmpose CocoDataset / mmseg BaseSegDataset builders on an own layout (10 keypoints, 5 classes) for the data
check tests."""
import json
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
UPPER_BODY10 = str(REPO / 'configs' / '_base_' / 'datasets' / 'layouts' / 'upper_body10.py')
CLASSES5 = ('background', 'head', 'torso', 'left_arm', 'right_arm')


def coco_pose_dataset(root: Path, num_keypoints: int = 10, visibility: float = 2, pipeline=()):
    """mmpose's CocoDataset on one 32x24 image with one annotation of ``num_keypoints`` keypoints."""
    from mmpose.datasets import CocoDataset
    cv2.imwrite(str(root / 'a.jpg'), np.zeros((32, 24, 3), np.uint8))
    keypoints = [v for i in range(num_keypoints) for v in (4 + i, 5 + i, visibility)]
    ann = dict(images=[dict(id=1, file_name='a.jpg', width=24, height=32)],
               annotations=[dict(id=7, image_id=1, category_id=1, bbox=[2, 2, 18, 26], area=468, iscrowd=0,
                                 num_keypoints=num_keypoints, keypoints=keypoints)],
               categories=[dict(id=1, name='person')])
    (root / 'ann.json').write_text(json.dumps(ann))
    return CocoDataset(data_root=str(root), ann_file='ann.json', data_prefix=dict(img=''),
                       metainfo=dict(from_file=UPPER_BODY10), pipeline=list(pipeline), test_mode=False)


def seg_dataset(root: Path, masks, image_size=(24, 32), classes=CLASSES5, **kwargs):
    """mmseg's BaseSegDataset with the 5 classes over ``masks`` (one label map per image, 32x24 images)."""
    from mmseg.datasets import BaseSegDataset
    (root / 'img').mkdir(exist_ok=True)
    (root / 'ann').mkdir(exist_ok=True)
    for i, mask in enumerate(masks):
        cv2.imwrite(str(root / 'img' / f'{i}.jpg'), np.zeros((image_size[1], image_size[0], 3), np.uint8))
        if mask is not None:
            cv2.imwrite(str(root / 'ann' / f'{i}.png'), mask)
    return BaseSegDataset(data_root=str(root), data_prefix=dict(img_path='img', seg_map_path='ann'),
                          img_suffix='.jpg', seg_map_suffix='.png', metainfo=dict(classes=classes), pipeline=[],
                          **kwargs)
