"""Canonical pointmap targets from depth and intrinsics (the official ``PointmapGenerateTarget``)."""
from typing import Optional

import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS


def backproject(depth: np.ndarray, cam_k: np.ndarray) -> np.ndarray:
    """(H, W) z-depth -> (H, W, 3) camera-frame points, X = (u - cx) Z / fx, Y = (v - cy) Z / fy."""
    height, width = depth.shape
    v, u = np.mgrid[0:height, 0:width].astype(np.float64)
    x = (u - cam_k[0, 2]) * depth / cam_k[0, 0]
    y = (v - cam_k[1, 2]) * depth / cam_k[1, 1]
    return np.stack([x, y, depth], axis=-1)


@TRANSFORMS.register_module()
class PointmapGenerateTarget(BaseTransform):
    """Canonicalise the pointmap to focal ``canonical_focal``.

    With s = canonical_focal / fx of the network input (``cam_K`` after all geometric transforms), writes
    ``gt_pointmap`` = s * (X, Y, Z) (0 off the mask), ``gt_scale`` = s, ``gt_mean_depth`` = mean canonical Z over the
    mask, ``original_K`` = the input intrinsics, and ``cam_K`` = the canonical intrinsics (f and c times s). The
    points are back-projected with ``gt_cam_K`` when the ground truth kept its original size (``Letterbox`` in
    test mode). Samples whose minimum canonical Z is below ``min_depth`` are rejected (``None``).
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def __init__(self, canonical_focal: float = 768.0, min_depth: Optional[float] = 0.04) -> None:
        self.canonical_focal = canonical_focal
        self.min_depth = min_depth

    def transform(self, results: dict) -> Optional[dict]:
        input_k = np.asarray(results['cam_K'], dtype=np.float64)
        scale = self.canonical_focal / input_k[0, 0]
        mask = results['gt_mask']
        points = scale * backproject(results['gt_depth'].astype(np.float64), results.get('gt_cam_K', input_k))
        points[~mask] = 0.0
        depth = points[..., 2][mask]
        if self.min_depth is not None and depth.size and depth.min() < self.min_depth:
            return None
        canonical_k = input_k.copy()
        canonical_k[:2, :] *= scale
        canonical_k[2, 2] = 1.0
        results.update(
            gt_pointmap=points.astype(np.float32),
            gt_scale=np.float32(scale),
            gt_mean_depth=np.float32(depth.mean() if depth.size else 1.0),
            original_K=input_k,
            cam_K=canonical_k)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(canonical_focal={self.canonical_focal}, min_depth={self.min_depth})'
