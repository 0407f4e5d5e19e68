"""The default SynthHumans folder (session fixture) holds every task's files in the documented formats."""
import json
import os
import os.path as osp

import cv2
import numpy as np


def test_layout_and_formats(synthhumans_root):
    for split, count in (('train', 256), ('val', 64)):
        base = osp.join(synthhumans_root, split)
        for folder, ext in (('rgb', 'png'), ('mask', 'png'), ('instance', 'png'), ('seg', 'png'), ('albedo', 'png'),
                            ('alpha', 'png'), ('foreground', 'png'), ('background', 'png'), ('normal', 'npy'),
                            ('depth', 'npy'), ('camera_intrinsics', 'txt'), ('camera_extrinsics', 'txt')):
            names = sorted(os.listdir(osp.join(base, folder)))
            assert names == [f'{i:06d}.{ext}' for i in range(count)], folder
    base, name = osp.join(synthhumans_root, 'val'), '000003'
    rgb = cv2.imread(osp.join(base, 'rgb', f'{name}.png'))
    mask = cv2.imread(osp.join(base, 'mask', f'{name}.png'), cv2.IMREAD_UNCHANGED)
    seg = cv2.imread(osp.join(base, 'seg', f'{name}.png'), cv2.IMREAD_UNCHANGED)
    normal = np.load(osp.join(base, 'normal', f'{name}.npy'))
    depth = np.load(osp.join(base, 'depth', f'{name}.npy'))
    K = np.loadtxt(osp.join(base, 'camera_intrinsics', f'{name}.txt'))
    ext = np.loadtxt(osp.join(base, 'camera_extrinsics', f'{name}.txt'))
    assert rgb.shape == (256, 192, 3) and mask.shape == seg.shape == (256, 192) and seg.dtype == np.uint8
    assert normal.shape == (256, 192, 3) and normal.dtype == depth.dtype == np.float32
    assert K.shape == (3, 3) and ext.shape == (4, 4) and np.allclose(ext[3], [0, 0, 0, 1])
    assert np.allclose(ext[:3, :3] @ ext[:3, :3].T, np.eye(3), atol=1e-8)
    assert np.array_equal(depth > 0, mask > 0)
    alpha = cv2.imread(osp.join(base, 'alpha', f'{name}.png'), cv2.IMREAD_UNCHANGED)
    foreground = cv2.imread(osp.join(base, 'foreground', f'{name}.png'), cv2.IMREAD_UNCHANGED)
    background = cv2.imread(osp.join(base, 'background', f'{name}.png'), cv2.IMREAD_UNCHANGED)
    assert alpha.shape == (256, 192) and alpha.dtype == np.uint8
    assert foreground.shape == background.shape == (256, 192, 3) and foreground.dtype == np.uint8
    composite = foreground + (1 - alpha[..., None] / 255.0) * background
    assert np.abs(composite - rgb).mean() < 4.0  # sensor noise (sigma 1-4) and 8-bit rounding only


def test_coco_annotations(synthhumans_root):
    with open(osp.join(synthhumans_root, 'annotations', 'keypoints308_train.json')) as f:
        coco = json.load(f)
    assert len(coco['images']) == 256 and coco['categories'][0]['name'] == 'person'
    assert len(coco['categories'][0]['keypoints']) == 308
    ids = {im['id'] for im in coco['images']}
    image = coco['images'][0]
    assert image['file_name'] == 'train/rgb/000000.png' and (image['height'], image['width']) == (256, 192)
    assert len(coco['annotations']) >= 256
    for ann in coco['annotations'][:50]:
        assert ann['image_id'] in ids and ann['category_id'] == 1 and ann['iscrowd'] == 0
        kps = np.array(ann['keypoints']).reshape(308, 3)
        assert ann['num_keypoints'] == int((kps[:, 2] > 0).sum()) and ann['area'] > 0
        x, y, w, h = ann['bbox']
        vis = kps[kps[:, 2] == 2]
        assert np.all((vis[:, 0] >= x - 1.5) & (vis[:, 0] <= x + w + 0.5))
        assert np.all((vis[:, 1] >= y - 1.5) & (vis[:, 1] <= y + h + 0.5))
