"""DINO-style multi-crop: 2 global and N local augmented views of one image."""
import math

import numpy as np
import torch
from mmcv.transforms import BaseTransform
from torch import Tensor
from torchvision.transforms import v2 as T

from sapiens2.registry import TRANSFORMS


def _blur(size: tuple[int, int], sigma: tuple[float, float], prob: float, reference_side: int) -> T.Transform:
    """Gaussian blur whose sigma range (given for a ``reference_side`` short side) scales with the view size."""
    scale = min(size) / reference_side
    lo, hi = sigma[0] * scale, sigma[1] * scale
    kernel = 2 * math.ceil(3 * hi) + 1
    return T.RandomApply([T.GaussianBlur(kernel, sigma=(lo, hi))], p=prob)


@TRANSFORMS.register_module()
class MultiViewCrop(BaseTransform):
    """Turns ``results['img']`` (HxWx3 BGR uint8) into ``global_views`` (2, 3, H, W) and ``local_views``
    (N, 3, h, w) uint8 BGR tensors.

    Every view is a random resized crop (area fraction ``global_scale`` / ``local_scale``, aspect ratio within
    [3/4, 4/3] of the view's own aspect, bicubic), a horizontal flip, colour jitter, random grayscale and Gaussian
    blur; the second global view may be solarised. Probabilities follow DINO: blur 1.0 / 0.1 on the two global
    views and 0.5 on local views, solarise 0.2 on the second global view. Sizes are (H, W).
    """

    def __init__(self,
                 global_size: tuple[int, int] = (1024, 768),
                 local_size: tuple[int, int] = (384, 288),
                 num_local: int = 4,
                 global_scale: tuple[float, float] = (0.32, 1.0),
                 local_scale: tuple[float, float] = (0.05, 0.32),
                 flip_prob: float = 0.5,
                 color_jitter: dict | None = None,
                 color_jitter_prob: float = 0.8,
                 grayscale_prob: float = 0.2,
                 global_blur_probs: tuple[float, float] = (1.0, 0.1),
                 local_blur_prob: float = 0.5,
                 solarize_prob: float = 0.2,
                 blur_sigma: tuple[float, float] = (0.1, 2.0),
                 blur_reference_side: int = 224) -> None:
        if num_local < 0:
            raise ValueError(f'num_local must be >= 0, got {num_local}')
        jitter = color_jitter or dict(brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1)
        colour = [T.RandomHorizontalFlip(flip_prob),
                  T.RandomApply([T.ColorJitter(**jitter)], p=color_jitter_prob),
                  T.RandomGrayscale(grayscale_prob)]
        blur = dict(sigma=blur_sigma, reference_side=blur_reference_side)
        self.global_transforms = [
            T.Compose([self._crop(global_size, global_scale), *colour,
                       _blur(global_size, prob=global_blur_probs[0], **blur)]),
            T.Compose([self._crop(global_size, global_scale), *colour,
                       _blur(global_size, prob=global_blur_probs[1], **blur),
                       T.RandomSolarize(threshold=128, p=solarize_prob)]),
        ]
        self.local_transform = T.Compose([self._crop(local_size, local_scale), *colour,
                                          _blur(local_size, prob=local_blur_prob, **blur)])
        self.num_local = num_local
        self.local_size = tuple(local_size)

    @staticmethod
    def _crop(size: tuple[int, int], scale: tuple[float, float]) -> T.Transform:
        aspect = size[1] / size[0]
        return T.RandomResizedCrop(tuple(size), scale=scale, ratio=(aspect * 3 / 4, aspect * 4 / 3),
                                   interpolation=T.InterpolationMode.BICUBIC, antialias=True)

    def transform(self, results: dict) -> dict | None:
        img = results.get('img')
        if img is None:
            return None
        if not (isinstance(img, np.ndarray) and img.ndim == 3 and img.shape[2] == 3):
            raise ValueError(f'MultiViewCrop expects an HxWx3 BGR image, got {getattr(img, "shape", type(img))} '
                             f'for {results.get("img_path")}')
        rgb = torch.from_numpy(np.ascontiguousarray(img[..., ::-1].transpose(2, 0, 1)))
        results['global_views'] = torch.stack([self._bgr(t(rgb)) for t in self.global_transforms])
        local = [self._bgr(self.local_transform(rgb)) for _ in range(self.num_local)]
        results['local_views'] = torch.stack(local) if local else torch.zeros(0, 3, *self.local_size,
                                                                               dtype=torch.uint8)
        return results

    @staticmethod
    def _bgr(rgb: Tensor) -> Tensor:
        return rgb.flip(0).contiguous()
