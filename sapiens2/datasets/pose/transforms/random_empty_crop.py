"""Crops without a person: a top-down model that has only seen a person in every crop finds one in a grey wall."""
from typing import Optional, Tuple

import numpy as np
from mmcv.transforms import BaseTransform
from mmpose.registry import TRANSFORMS

from sapiens2.datasets.synthhumans.photos import load_photos, photo_background, photo_paths


@TRANSFORMS.register_module()
class RandomEmptyCrop(BaseTransform):
    """With probability ``prob``, replace the crop by a picture without a person and its targets by empty heatmaps.

    The picture is a crop of a scene photo (``photo_prob`` of the time: the package photos of
    :mod:`sapiens2.datasets.synthhumans.photos`, or ``photo_folder``) or a flat colour with a gradient and noise.
    Every keypoint keeps its dataset weight, so the loss pulls all heatmaps to zero. Put it after ``GenerateTarget``.

    Args:
        prob: Share of the crops made empty.
        photo_prob: Share of the empty crops cut from photos; 0 needs no photo.
        photo_folder: Scene photos of your own (no people); default: the package photos.
    """

    def __init__(self, prob: float = 0.1, photo_prob: float = 0.5, photo_folder: Optional[str] = None) -> None:
        for name, value in (('prob', prob), ('photo_prob', photo_prob)):
            if not 0 <= value <= 1:
                raise ValueError(f'RandomEmptyCrop: {name} is a probability between 0 and 1, got {value}')
        self.prob = prob
        self.photo_prob = photo_prob
        self.photo_folder = photo_folder
        # Found now, so that a missing photo package stops the run before its first iteration; read on first use.
        self._paths = photo_paths(photo_folder) if prob > 0 and photo_prob > 0 else ()
        self._photos: Optional[Tuple[np.ndarray, ...]] = None

    def photos(self) -> Tuple[np.ndarray, ...]:
        if self._photos is None:  # once per worker
            self._photos = load_photos(self._paths)
        return self._photos

    def empty_picture(self, size: Tuple[int, int]) -> np.ndarray:
        """A BGR uint8 picture of ``size = (H, W)`` without a person."""
        if np.random.rand() < self.photo_prob:
            return photo_background(self.photos(), int(np.random.randint(2**31)), size)
        height, width = size
        colour = np.random.uniform(0, 255, 3).astype(np.float32)  # (3, )
        ramp = np.linspace(-1, 1, width, dtype=np.float32)[None, :, None]  # (1, W, 1) along a random direction
        if np.random.rand() < 0.5:
            ramp = np.linspace(-1, 1, height, dtype=np.float32)[:, None, None]  # (H, 1, 1)
        gradient = ramp * np.random.uniform(-40, 40, 3).astype(np.float32)
        noise = np.random.normal(0, np.random.uniform(0, 12), (height, width, 3)).astype(np.float32)
        return np.clip(np.round(colour + gradient + noise), 0, 255).astype(np.uint8)

    def transform(self, results: dict) -> dict:
        if np.random.rand() >= self.prob:
            return results
        if 'heatmaps' not in results:
            raise KeyError('RandomEmptyCrop needs the heatmap targets: put it after GenerateTarget in the pipeline')
        results['img'] = self.empty_picture(results['img'].shape[:2])
        results['heatmaps'] = np.zeros_like(results['heatmaps'])  # (K, h, w)
        weights = results.get('dataset_keypoint_weights')
        num_keypoints = results['keypoint_weights'].shape[-1]
        full = np.ones(num_keypoints, np.float32) if weights is None else np.asarray(weights, np.float32)
        results['keypoint_weights'] = np.broadcast_to(full, results['keypoint_weights'].shape).copy()  # (1, K)
        return results

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(prob={self.prob}, photo_prob={self.photo_prob}, '
                f'photo_folder={self.photo_folder})')
