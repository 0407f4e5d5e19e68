"""Random additive Gaussian noise on the image (the official ``RandomGaussianNoise``); labels are untouched."""
from typing import Tuple

import numpy as np
from mmcv.transforms import BaseTransform
from mmseg.registry import TRANSFORMS


@TRANSFORMS.register_module()
class RandomGaussianNoise(BaseTransform):
    """With probability ``prob``, add zero-mean Gaussian noise of variance ~ U(``var_range``) to ``img``.

    The result is clipped to [0, 255] and keeps the input dtype.

    Args:
        prob: Probability of adding noise.
        var_range: Range of the noise variance, in squared intensity levels.
    """

    def __init__(self, prob: float = 0.3, var_range: Tuple[float, float] = (5.0, 20.0)) -> None:
        self.prob = prob
        self.var_range = tuple(var_range)

    def transform(self, results: dict) -> dict:
        """Add noise to ``results['img']``."""
        if np.random.rand() < self.prob:
            image = results['img']
            std = np.sqrt(np.random.uniform(*self.var_range))
            noisy = image.astype(np.float32) + np.random.normal(0.0, std, image.shape).astype(np.float32)
            results['img'] = np.clip(noisy, 0, 255).astype(image.dtype)
        return results

    def __repr__(self) -> str:
        return f'{type(self).__name__}(prob={self.prob}, var_range={self.var_range})'
