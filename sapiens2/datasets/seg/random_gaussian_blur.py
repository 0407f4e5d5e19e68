"""Random Gaussian blur of the image (the official ``RandomGaussianBlur``); labels are untouched."""
from typing import Tuple

import cv2
import numpy as np
from mmcv.transforms import BaseTransform
from mmseg.registry import TRANSFORMS


@TRANSFORMS.register_module()
class RandomGaussianBlur(BaseTransform):
    """With probability ``prob``, blur ``img`` with a ``kernel_size`` Gaussian of sigma ~ U(``sigma_range``).

    Args:
        prob: Probability of blurring.
        kernel_size: Odd kernel size.
        sigma_range: Range of the Gaussian sigma in pixels.
    """

    def __init__(self, prob: float = 0.3, kernel_size: int = 3, sigma_range: Tuple[float, float] = (0.1, 2.0)) -> None:
        if kernel_size % 2 != 1:
            raise ValueError(f'kernel_size must be odd, got {kernel_size}')
        self.prob = prob
        self.kernel_size = kernel_size
        self.sigma_range = tuple(sigma_range)

    def transform(self, results: dict) -> dict:
        """Blur ``results['img']`` in place of the original."""
        if np.random.rand() < self.prob:
            sigma = np.random.uniform(*self.sigma_range)
            results['img'] = cv2.GaussianBlur(results['img'], (self.kernel_size, self.kernel_size), sigma)
        return results

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(prob={self.prob}, kernel_size={self.kernel_size}, '
                f'sigma_range={self.sigma_range})')
