"""Random mean or median blur (the official albumentations Blur / MedianBlur steps)."""
from typing import Tuple

import cv2
import numpy as np
from mmcv.transforms import BaseTransform
from mmpose.registry import TRANSFORMS


@TRANSFORMS.register_module()
class RandomBlur(BaseTransform):
    """Blur the image with probability ``prob`` using a random odd kernel size in ``kernel_range``.

    Args:
        mode: ``'mean'`` (box filter, albumentations ``Blur``) or ``'median'`` (``MedianBlur``).
        prob: Probability of applying the blur (official: 0.1 for each mode).
        kernel_range: Inclusive (min, max) kernel size; only odd sizes are drawn (official: 3-7).
    """

    MODES = ('mean', 'median')

    def __init__(self, mode: str = 'mean', prob: float = 0.1, kernel_range: Tuple[int, int] = (3, 7)) -> None:
        if mode not in self.MODES:
            raise ValueError(f'RandomBlur mode must be one of {self.MODES}, got {mode!r}.')
        odd_sizes = [k for k in range(kernel_range[0], kernel_range[1] + 1) if k % 2 == 1 and k >= 3]
        if not odd_sizes:
            raise ValueError(f'kernel_range {kernel_range} contains no odd kernel size >= 3.')
        self.mode = mode
        self.prob = prob
        self.kernel_range = kernel_range
        self.odd_sizes = odd_sizes

    def transform(self, results: dict) -> dict:
        if np.random.rand() >= self.prob:
            return results
        k = int(np.random.choice(self.odd_sizes))
        img = results['img']
        results['img'] = cv2.blur(img, (k, k)) if self.mode == 'mean' else cv2.medianBlur(img, k)
        return results

    def __repr__(self) -> str:
        return f'{type(self).__name__}(mode={self.mode!r}, prob={self.prob}, kernel_range={self.kernel_range})'
