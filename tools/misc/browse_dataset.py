"""Write augmented training samples with their annotations drawn, for any task's config.

Usage: python tools/misc/browse_dataset.py CONFIG --out DIR [--num 10] [--split train|val] [--cfg-options ...]

Each picture is the network input after the pipeline (crop, flips, photometric changes...) beside the same input
with its targets: keypoints and skeleton (pose), the part palette (seg), or the dense target (normal, pointmap
depth, albedo; background black; matting: the alpha matte in grey).
"""
import argparse
import os
import os.path as osp
import sys

import cv2
import numpy as np
from mmengine.registry import DATASETS, init_default_scope

from sapiens2.config.cli_options import ConfigOptionsAction
from sapiens2.engine.launch import load_config
from sapiens2.structures.layout import class_palette, keypoint_style
from sapiens2.utils.cli_errors import add_debug_argument, run_cli
from sapiens2.utils.image_write import write_image
from sapiens2.visualization.dense_maps import albedo_to_bgr, depth_to_bgr, normals_to_bgr, overlay_labels, side_by_side  # noqa
from sapiens2.visualization.keypoints import draw_keypoints


def draw_targets(image: np.ndarray, sample, meta: dict, dataset_type: str) -> np.ndarray:
    """Draw a packed data sample's ground truth on its (H, W, 3) BGR input image."""
    if 'gt_instances' in sample and 'keypoints' in sample.gt_instances:
        inst = sample.gt_instances
        kpts = np.asarray(inst.get('transformed_keypoints', inst.keypoints))
        visible = np.asarray(inst.keypoints_visible, dtype=np.float32).reshape(kpts.shape[:2])
        return draw_keypoints(image, kpts, visible, keypoint_style(meta, kpts.shape[1]), kpt_thr=0.5)
    if 'gt_sem_seg' in sample:
        labels = _to_image_size(sample.gt_sem_seg.data[0].cpu().numpy().astype(np.uint8), image)
        return overlay_labels(image, np.where(labels == 255, 0, labels).astype(np.int64), class_palette(meta))
    if 'gt_dense' in sample:
        data = _to_image_size(sample.gt_dense.data.cpu().float().numpy().transpose(1, 2, 0), image)
        mask = (_to_image_size(sample.gt_dense.mask.cpu().numpy()[0].astype(np.uint8), image).astype(bool)
                if 'mask' in sample.gt_dense else None)
        kind = dataset_type.lower()
        if 'pointmap' in kind or 'depth' in kind:
            return depth_to_bgr(data[..., -1], mask)
        if 'albedo' in kind:
            return albedo_to_bgr(data, mask)
        if 'matting' in kind:
            from sapiens2_matting.matting_pictures import alpha_to_bgr
            return alpha_to_bgr(data[..., 0])  # the target's alpha channel
        return normals_to_bgr(data, mask)
    raise ValueError(f'cannot draw this sample: no gt_instances keypoints, gt_sem_seg or gt_dense in {sample.keys()}')


def _to_image_size(labels: np.ndarray, image: np.ndarray) -> np.ndarray:
    """A target (H', W'[, C]) stored at another resolution than its input image, resized (nearest) to the image."""
    height, width = image.shape[:2]
    if labels.shape[:2] == (height, width):
        return labels
    return cv2.resize(labels, (width, height), interpolation=cv2.INTER_NEAREST)


def enable_transformed_keypoints(pipeline: list) -> None:
    """Ask mmpose's PackPoseInputs to pack the keypoints after the affine crop."""
    for transform in pipeline:
        if str(transform.get('type', '')).endswith('PackPoseInputs'):
            transform['pack_transformed'] = True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description='Draw augmented samples of a config\'s dataset')
    parser.add_argument('config')
    parser.add_argument('--out', required=True, help='output folder')
    parser.add_argument('--num', type=int, default=10, help='number of samples')
    parser.add_argument('--split', choices=('train', 'val', 'test'), default='train')
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction)
    add_debug_argument(parser)
    args = parser.parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    dataset_cfg = cfg[f'{args.split}_dataloader'].dataset
    enable_transformed_keypoints(dataset_cfg.get('pipeline', []))
    dataset = DATASETS.build(dataset_cfg)
    meta = getattr(dataset, 'metainfo', {}) or {}
    os.makedirs(args.out, exist_ok=True)
    for index in range(min(args.num, len(dataset))):
        packed = dataset[index]
        image = packed['inputs'].cpu().numpy().transpose(1, 2, 0).astype(np.uint8).copy()
        picture = side_by_side(image, draw_targets(image, packed['data_samples'], meta, dataset_cfg.type))
        path = osp.join(args.out, f'{args.split}_{index:04d}.png')
        write_image(path, picture)
    print(f'{min(args.num, len(dataset))} samples written to {args.out}')
    return 0


if __name__ == '__main__':
    sys.exit(run_cli(main))
