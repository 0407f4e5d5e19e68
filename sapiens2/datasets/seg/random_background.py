"""Composite the person onto a random background image (the official ``SegRandomBackground``)."""
import os
import os.path as osp
from typing import Sequence

import cv2
import numpy as np
from mmcv.transforms import BaseTransform
from mmseg.registry import TRANSFORMS

from sapiens2.datasets.image_files import read_image_file


def fit_background(background: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize ``background`` to ``height`` keeping its aspect; centre-crop to ``width``, or stretch if narrower."""
    scale = height / background.shape[0]
    resized_width = max(1, round(background.shape[1] * scale))
    background = cv2.resize(background, (resized_width, height), interpolation=cv2.INTER_LINEAR)
    if resized_width < width:
        return cv2.resize(background, (width, height), interpolation=cv2.INTER_LINEAR)
    left = (resized_width - width) // 2
    return background[:, left:left + width]


def reinhard_transfer(image: np.ndarray, background: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Move the Lab mean/std of ``image`` under ``mask`` to those of ``background`` (Reinhard et al. 2001).

    Both images are BGR uint8 of the same size; the result is BGR uint8.
    """
    image_lab = cv2.cvtColor(image.astype(np.float32) / 255, cv2.COLOR_BGR2Lab)
    background_lab = cv2.cvtColor(background.astype(np.float32) / 255, cv2.COLOR_BGR2Lab)
    foreground = image_lab[mask]
    source_mean, source_std = foreground.mean(0), foreground.std(0) + 1e-6
    target_mean, target_std = background_lab.reshape(-1, 3).mean(0), background_lab.reshape(-1, 3).std(0)
    moved = (image_lab - source_mean) / source_std * target_std + target_mean
    moved = cv2.cvtColor(moved.astype(np.float32), cv2.COLOR_Lab2BGR)
    return np.clip(moved * 255 + 0.5, 0, 255).astype(np.uint8)


@TRANSFORMS.register_module()
class RandomBackground(BaseTransform):
    """Replace the background (label 0) of ``img`` with a random image from ``bg_dir``.

    The background image is fitted to the image height and centre-cropped (or stretched) to its width. With
    ``color_transfer`` the person's colours are moved to the background's Lab statistics before compositing.
    Required keys: ``img`` (BGR uint8), ``gt_seg_map``; modified: ``img``. Samples whose ``skip_key`` is true
    (e.g. in-the-wild photos, ``is_itw``) are left alone.

    Args:
        bg_dir: Folder of background images (searched recursively).
        prob: Probability of replacing the background.
        color_transfer: Apply the Reinhard colour transfer to the person.
        suffixes: Image file suffixes to use from ``bg_dir``.
        skip_key: Result key that, when true, disables the transform for that sample.
    """

    def __init__(self,
                 bg_dir: str,
                 prob: float = 0.8,
                 color_transfer: bool = True,
                 suffixes: Sequence[str] = ('.jpg', '.jpeg', '.png'),
                 skip_key: str = 'is_itw') -> None:
        if not osp.isdir(bg_dir):
            raise FileNotFoundError(f'RandomBackground: bg_dir {bg_dir!r} is not a folder; point it at a folder of '
                                    'background images (e.g. BG-20k/train) or remove the transform')
        self.files = sorted(
            osp.join(root, name) for root, _, names in os.walk(bg_dir) for name in names
            if name.lower().endswith(tuple(suffixes)))
        if not self.files:
            raise FileNotFoundError(f'RandomBackground: no {tuple(suffixes)} images under {bg_dir!r}')
        self.bg_dir = bg_dir
        self.prob = prob
        self.color_transfer = color_transfer
        self.skip_key = skip_key

    def transform(self, results: dict) -> dict:
        """Composite ``img`` onto a random background where ``gt_seg_map`` is 0."""
        if results.get(self.skip_key, False) or np.random.rand() >= self.prob:
            return results
        image, labels = results['img'], results['gt_seg_map']
        mask = labels > 0
        if not mask.any():
            return results
        path = self.files[np.random.randint(len(self.files))]
        background = fit_background(read_image_file(path, cv2.IMREAD_COLOR, what='background image'),
                                    *image.shape[:2])
        person = reinhard_transfer(image, background, mask) if self.color_transfer else image
        results['img'] = np.where(mask[..., None], person, background)
        return results

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(bg_dir={self.bg_dir!r}, prob={self.prob}, '
                f'color_transfer={self.color_transfer}, num_files={len(self.files)})')
