"""Derive a trimap from the alpha matte: the solid foreground and background, eroded, are known; the rest is unknown."""
import random
from typing import Sequence, Union

import cv2
import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS

# Alpha within this of 0 or 1 counts as solid background or foreground (half an 8-bit level).
SOLID_TOLERANCE = 0.5 / 255


def derive_trimap(alpha: np.ndarray, radius: int) -> np.ndarray:
    """uint8 trimap (0 background, 128 unknown, 255 foreground) of an (H, W) alpha in [0, 1]: pixels with a
    fractional alpha, and those closer than ``radius`` pixels to one, are unknown (disc erosion of the solid
    regions)."""
    trimap = np.full(alpha.shape, 128, np.uint8)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    for value, solid in ((255, alpha >= 1 - SOLID_TOLERANCE), (0, alpha <= SOLID_TOLERANCE)):
        eroded = cv2.erode(solid.astype(np.uint8), kernel) if radius > 0 else solid.astype(np.uint8)
        trimap[eroded > 0] = value
    return trimap


@TRANSFORMS.register_module()
class GenerateTrimap(BaseTransform):
    """Set ``gt_trimap`` from ``gt_alpha`` with :func:`derive_trimap`.

    Args:
        radius: Erosion radius in pixels of the current maps, or a (min, max) range drawn uniformly per sample
            (training).
        keep_existing: Keep a trimap the dataset provides (``trimap/`` folder) instead of deriving one.
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def __init__(self, radius: Union[int, Sequence[int]] = 5, keep_existing: bool = True) -> None:
        low, high = (radius, radius) if isinstance(radius, int) else tuple(radius)
        if not 0 <= low <= high:
            raise ValueError(f'radius must be an int >= 0 or a (min, max) range with 0 <= min <= max, got {radius}')
        self.radius = (int(low), int(high))
        self.keep_existing = keep_existing

    def transform(self, results: dict) -> dict:
        if self.keep_existing and 'gt_trimap' in results:
            return results
        if 'gt_alpha' not in results:
            raise KeyError('GenerateTrimap needs results["gt_alpha"]; put LoadMattingAnnotations before it.')
        results['gt_trimap'] = derive_trimap(results['gt_alpha'], random.randint(*self.radius))
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(radius={self.radius}, keep_existing={self.keep_existing})'
