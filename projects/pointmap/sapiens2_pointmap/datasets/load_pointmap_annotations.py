"""Read mask, depth and cameras of a pointmap sample and apply the official validity rules."""
from typing import Optional, Sequence

import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.datasets.transforms.dense_loading import check_same_size, read_array, read_mask
from sapiens2.registry import TRANSFORMS


def read_matrix(path: str, shape: Sequence[int]) -> np.ndarray:
    """A whitespace-separated text matrix of the given shape, as float64."""
    try:
        matrix = np.loadtxt(path, dtype=np.float64, ndmin=1)
    except (OSError, ValueError) as err:
        raise ValueError(f'{path!r} is not a readable {shape[0]}x{shape[1]} text matrix ({err}); write it as '
                         f'{shape[0]} lines of {shape[1]} whitespace-separated numbers.') from err
    if not np.isfinite(matrix).all():
        raise ValueError(f'{path!r} holds non-finite values; camera matrices must be finite.')
    if matrix.size != int(np.prod(shape)):
        raise ValueError(f'{path!r} must hold a {shape[0]}x{shape[1]} matrix, got {matrix.size} values.')
    return matrix.reshape(shape)


def read_intrinsics(path: str) -> np.ndarray:
    """A 3x3 pinhole intrinsics matrix [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0."""
    K = read_matrix(path, (3, 3))
    if not (K[0, 0] > 0 and K[1, 1] > 0 and np.allclose(K[1:, 0], 0) and np.allclose(K[2], (0, 0, 1))):
        raise ValueError(f'{path!r} is not a camera intrinsics matrix [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with '
                         f'focal lengths fx, fy > 0: got {K.tolist()}. An all-zero or transposed matrix gives '
                         'non-finite pointmaps and losses; write the camera of this image.')
    return K


def read_extrinsics(path: str) -> np.ndarray:
    """A 4x4 world-to-camera matrix [[R, t], [0, 0, 0, 1]] with an invertible R."""
    E = read_matrix(path, (4, 4))
    if not (np.allclose(E[3], (0, 0, 0, 1)) and abs(np.linalg.det(E[:3, :3])) > 1e-6):
        raise ValueError(f'{path!r} is not a camera extrinsics matrix [[R, t], [0, 0, 0, 1]] with an invertible '
                         f'rotation R: got {E.tolist()}; write the world-to-camera transform of this image.')
    return E


@TRANSFORMS.register_module()
class LoadPointmapAnnotations(BaseTransform):
    """Load ``gt_mask`` (bool), ``gt_depth`` (float32 HxW), ``cam_K`` (3x3) and ``cam_extrinsics`` (4x4).

    Unreadable files, and camera matrices that are not a pinhole intrinsics / rigid extrinsics matrix (e.g. all
    zeros), raise an error naming the file.

    Pixels with non-finite or non-positive depth leave the mask; a sample with fewer than ``min_valid_pixels`` valid
    pixels is rejected (``None``, re-drawn in training).
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def __init__(self, min_valid_pixels: int = 10) -> None:
        self.min_valid_pixels = min_valid_pixels

    def transform(self, results: dict) -> Optional[dict]:
        results['gt_mask'] = read_mask(results['mask_path'])
        depth = read_array(results['depth_path'], 'depth map').astype(np.float32)
        if depth.ndim == 3 and depth.shape[2] == 1:
            depth = depth[..., 0]
        if depth.ndim != 2:
            raise ValueError(f'Depth map {results["depth_path"]!r} must be HxW, got shape {depth.shape}.')
        results['gt_depth'] = depth
        check_same_size(results, 'gt_mask', results['mask_path'])
        check_same_size(results, 'gt_depth', results['depth_path'])
        valid_depth = np.isfinite(depth) & (depth > 0)
        results['gt_depth'] = np.where(valid_depth, depth, 0.0).astype(np.float32)
        results['gt_mask'] &= valid_depth
        results['cam_K'] = read_intrinsics(results['intrinsics_path'])
        results['cam_extrinsics'] = read_extrinsics(results['extrinsics_path'])
        if results['gt_mask'].sum() < self.min_valid_pixels:
            return None
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(min_valid_pixels={self.min_valid_pixels})'
