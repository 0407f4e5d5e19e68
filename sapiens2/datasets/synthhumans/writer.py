"""On-disk formats of a SynthHumans split (one sample at a time) and of its COCO-style keypoint annotations."""
import os
import os.path as osp
from typing import List

import numpy as np

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_save_npy, atomic_write_text, open_atomic
from sapiens2.utils.image_write import write_image as _imwrite

from .metainfo import keypoint_meta
from .render import Rendering

FOLDERS = ('rgb', 'mask', 'instance', 'seg', 'albedo', 'alpha', 'foreground', 'background', 'normal', 'depth',
           'camera_intrinsics', 'camera_extrinsics')
NUM_KEYPOINTS = 308


def make_split_dirs(root: str, split: str, rgb_only: bool = False) -> None:
    for folder in ('rgb', ) if rgb_only else FOLDERS:
        os.makedirs(osp.join(root, split, folder), exist_ok=True)
    if not rgb_only:
        os.makedirs(osp.join(root, 'annotations'), exist_ok=True)


def write_image(root: str, split: str, name: str, image: np.ndarray) -> str:
    """Write only the image as ``<root>/<split>/rgb/<name>.png``; return its path."""
    path = osp.join(root, split, 'rgb', f'{name}.png')
    _imwrite(path, image)
    return path


def write_sample(root: str, split: str, name: str, r: Rendering) -> List[str]:
    """Write every map of one rendering as ``<root>/<split>/<folder>/<name>.<ext>``; return their paths."""
    base = osp.join(root, split)
    paths = []
    alpha = np.round(np.clip(r.alpha, 0.0, 1.0) * 255).astype(np.uint8)
    foreground = np.round(np.clip(r.foreground, 0.0, 255.0)).astype(np.uint8)
    for folder, image in (('rgb', r.image), ('mask', r.mask), ('instance', r.instance), ('seg', r.seg),
                          ('albedo', r.albedo), ('alpha', alpha), ('foreground', foreground),
                          ('background', r.background)):
        paths.append(osp.join(base, folder, f'{name}.png'))
        _imwrite(paths[-1], image)
    for folder, array in (('normal', r.normal), ('depth', r.depth)):
        paths.append(osp.join(base, folder, f'{name}.npy'))
        atomic_save_npy(paths[-1], array)
    for folder, matrix in (('camera_intrinsics', r.K), ('camera_extrinsics', r.extrinsic)):
        paths.append(osp.join(base, folder, f'{name}.txt'))
        with open_atomic(paths[-1]) as f:
            np.savetxt(f, matrix, fmt='%.10g')
    return paths


def coco_records(r: Rendering, image_id: int, file_name: str, first_ann_id: int):
    """The COCO ``image`` record and the ``annotations`` of the visible people of one rendering."""
    height, width = r.mask.shape
    image = dict(id=image_id, file_name=file_name, width=width, height=height)
    anns = []
    for kps, bbox, area in zip(r.keypoints, r.bboxes, r.areas):
        if area == 0:
            continue
        flat = np.round(kps, 3)
        flat[:, 2] = kps[:, 2]
        anns.append(dict(id=first_ann_id + len(anns), image_id=image_id, category_id=1,
                         keypoints=[float(v) for v in flat.reshape(-1)], num_keypoints=int((kps[:, 2] > 0).sum()),
                         bbox=[float(v) for v in bbox], area=float(area), iscrowd=0))
    return image, anns


def write_annotations(root: str, split: str, images: List[dict], annotations: List[dict]) -> str:
    """Write ``<root>/annotations/keypoints308_<split>.json`` and return its path."""
    meta = keypoint_meta()
    category = dict(id=1, name='person', supercategory='person', keypoints=meta['keypoint_names'],
                    skeleton=[link['link'] for link in meta['skeleton_links']])
    path = osp.join(root, 'annotations', f'keypoints308_{split}.json')
    atomic_write_text(path, strict_json.dumps(dict(images=images, annotations=annotations, categories=[category])))
    return path
