"""Coarse dropout: blank one random rectangle of the crop (the official albumentations setting)."""
from typing import Tuple

import numpy as np
from mmcv.transforms import BaseTransform
from mmpose.registry import TRANSFORMS


@TRANSFORMS.register_module()
class CoarseDropout(BaseTransform):
    """Fill ``num_holes`` rectangles whose height and width are uniform fractions of the image size.

    The official pipeline uses one hole with height and width each 20-40 % of the crop, p = 1.0, fill 0.
    Keypoints and their visibility are left unchanged (as albumentations does).

    Args:
        hole_size: (min, max) size of a hole as a fraction of the image height / width.
        num_holes: Number of holes.
        prob: Probability of applying the transform.
        fill_value: Pixel value written into the holes.
    """

    def __init__(self, hole_size: Tuple[float, float] = (0.2, 0.4), num_holes: int = 1, prob: float = 1.0,
                 fill_value: int = 0) -> None:
        if not 0 < hole_size[0] <= hole_size[1] <= 1:
            raise ValueError(f'hole_size must satisfy 0 < min <= max <= 1, got {hole_size}.')
        self.hole_size = hole_size
        self.num_holes = num_holes
        self.prob = prob
        self.fill_value = fill_value

    def transform(self, results: dict) -> dict:
        if np.random.rand() >= self.prob:
            return results
        img = results['img'].copy()
        h, w = img.shape[:2]
        for _ in range(self.num_holes):
            hole_h = max(1, int(h * np.random.uniform(*self.hole_size)))
            hole_w = max(1, int(w * np.random.uniform(*self.hole_size)))
            y0 = np.random.randint(0, h - hole_h + 1)
            x0 = np.random.randint(0, w - hole_w + 1)
            img[y0:y0 + hole_h, x0:x0 + hole_w] = self.fill_value
        results['img'] = img
        return results

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(hole_size={self.hole_size}, num_holes={self.num_holes}, prob={self.prob}, '
                f'fill_value={self.fill_value})')
