"""Read the mask and normal map of a sample and apply the official validity rules."""
from typing import Sequence

import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.datasets.transforms.dense_loading import check_same_size, read_array, read_mask, read_npz_array
from sapiens2.registry import TRANSFORMS

# 28-class ids the official readers remove from supervision with a seg map: face/neck, hair, lips, teeth, tongue.
REMOVED_SEG28_IDS = (2, 3, 23, 24, 25, 26, 27)


def read_normal(path: str) -> np.ndarray:
    """An (H, W, 3) float32 normal map from ``.npy`` or ``.npz`` (key ``normal``)."""
    data = read_npz_array(path, 'normal', 'normal map') if path.endswith('.npz') else read_array(path, 'normal map')
    if data.ndim != 3 or data.shape[2] != 3:
        raise ValueError(f'Normal map {path!r} must be HxWx3, got shape {data.shape}.')
    return data.astype(np.float32)


@TRANSFORMS.register_module()
class LoadNormalAnnotations(BaseTransform):
    """Load ``gt_mask`` (bool HxW) and ``gt_normal`` (float32 HxWx3, unit length on valid pixels).

    NaN/Inf normals and near-zero normals leave the mask; non-unit normals are renormalised; with a ``seg_path``
    the ids ``removed_seg_ids`` leave the mask. A mask, normal map or seg map of another size than the image, or a
    missing file, is an error naming the files.
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def __init__(self, removed_seg_ids: Sequence[int] = REMOVED_SEG28_IDS) -> None:
        self.removed_seg_ids = tuple(removed_seg_ids)

    def transform(self, results: dict) -> dict:
        results['gt_mask'] = read_mask(results['mask_path'])
        results['gt_normal'] = read_normal(results['normal_path'])
        check_same_size(results, 'gt_mask', results['mask_path'])
        check_same_size(results, 'gt_normal', results['normal_path'])
        normal = results['gt_normal']
        finite = np.isfinite(normal).all(-1)
        normal = np.where(finite[..., None], normal, 0.0).astype(np.float32)
        length = np.linalg.norm(normal, axis=-1, keepdims=True)
        results['gt_normal'] = np.where(length > 1e-6, normal / np.maximum(length, 1e-6), 0.0).astype(np.float32)
        results['gt_mask'] &= finite & (length[..., 0] > 1e-6)
        if 'seg_path' in results:
            seg = read_array(results['seg_path'], 'seg map')
            if seg.ndim != 2:
                raise ValueError(f"seg map {results['seg_path']!r} must be HxW class ids, got shape {seg.shape}.")
            check_same_size(results, 'seg map', results['seg_path'], seg)
            results['gt_mask'] &= ~np.isin(seg, self.removed_seg_ids)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(removed_seg_ids={self.removed_seg_ids})'
