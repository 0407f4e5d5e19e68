"""Image-only degradations of the official normal pipeline: random down-up sampling and solarisation.

Its Gaussian blur and noise reuse the segmentation transforms ``mmseg.RandomGaussianBlur`` and
``mmseg.RandomGaussianNoise``.
"""
import random
from typing import Sequence

import cv2
import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS

RESAMPLERS = (cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA, cv2.INTER_LANCZOS4)


class _RandomImageOp(BaseTransform):
    """Applies :meth:`apply` to ``results['img']`` with probability ``prob``."""

    def __init__(self, prob: float) -> None:
        self.prob = prob

    def apply(self, img: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def transform(self, results: dict) -> dict:
        if random.random() < self.prob:
            results['img'] = self.apply(results['img'])
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(prob={self.prob})'


@TRANSFORMS.register_module()
class RandomDownUpSample(_RandomImageOp):
    """Down-sample by s ~ U(``scale_range``) then back up, each with a random interpolation."""

    def __init__(self, prob: float = 0.2, scale_range: Sequence[float] = (0.1, 0.7)) -> None:
        super().__init__(prob)
        self.scale_range = tuple(scale_range)

    def apply(self, img: np.ndarray) -> np.ndarray:
        height, width = img.shape[:2]
        scale = random.uniform(*self.scale_range)
        small = (max(1, int(width * scale)), max(1, int(height * scale)))
        img = cv2.resize(img, small, interpolation=random.choice(RESAMPLERS))
        return cv2.resize(img, (width, height), interpolation=random.choice(RESAMPLERS))


@TRANSFORMS.register_module()
class RandomSolarize(_RandomImageOp):
    """Invert pixels at or above ``threshold``."""

    def __init__(self, prob: float = 0.3, threshold: int = 128) -> None:
        super().__init__(prob)
        self.threshold = threshold

    def apply(self, img: np.ndarray) -> np.ndarray:
        return np.where(img >= self.threshold, 255 - img, img).astype(img.dtype)
