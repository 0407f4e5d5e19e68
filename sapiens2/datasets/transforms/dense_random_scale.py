"""Random isotropic rescale of a dense sample (image, maps and intrinsics)."""
import random
from typing import Dict, Optional, Sequence

import cv2
import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS
from sapiens2.structures.letterbox import INTERPOLATIONS, update_intrinsics

from .dense_keys import present_maps


def resize_map(array: np.ndarray, size_wh: Sequence[int], interpolation: str) -> np.ndarray:
    """cv2 resize that keeps bool dtype and a trailing channel axis of size 1."""
    is_bool = array.dtype == bool
    src = array.astype(np.uint8) if is_bool else array
    out = cv2.resize(src, tuple(size_wh), interpolation=INTERPOLATIONS[interpolation])
    if out.ndim < array.ndim:
        out = out[..., None]
    return out.astype(bool) if is_bool else out


@TRANSFORMS.register_module()
class DenseRandomScale(BaseTransform):
    """With probability ``prob``, rescale by s ~ U(``scale_range``) (the official dense ``*RandomScale``).

    The image is resized bilinearly, the maps with their interpolation (default: ``DENSE_MAP_INTERPOLATIONS``),
    and ``cam_K`` (fx, fy, cx, cy) is scaled by the actual per-axis factor.
    """

    def __init__(self,
                 prob: float = 0.3,
                 scale_range: Sequence[float] = (0.5, 2.0),
                 map_interpolations: Optional[Dict[str, str]] = None) -> None:
        self.prob = prob
        self.scale_range = tuple(scale_range)
        self.map_interpolations = map_interpolations

    def transform(self, results: dict) -> dict:
        if random.random() >= self.prob:
            return results
        scale = random.uniform(*self.scale_range)
        height, width = results['img'].shape[:2]
        new_w, new_h = max(1, int(round(width * scale))), max(1, int(round(height * scale)))
        results['img'] = resize_map(results['img'], (new_w, new_h), 'bilinear')
        for key, mode in present_maps(results, self.map_interpolations).items():
            results[key] = resize_map(results[key], (new_w, new_h), mode)
        if 'cam_K' in results:
            results['cam_K'] = update_intrinsics(results['cam_K'], (new_w / width, new_h / height), (0, 0))
        results['img_shape'] = (new_h, new_w)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(prob={self.prob}, scale_range={self.scale_range})'
