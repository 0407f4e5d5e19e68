"""Horizontal flip of a dense sample, with the geometry that goes with it."""
import random
from typing import Iterable, Optional, Sequence

import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS

from .dense_keys import present_keys


@TRANSFORMS.register_module()
class DenseRandomFlip(BaseTransform):
    """With probability ``prob``, flip image and maps left-right.

    * ``negate_x_keys``: vector maps whose x component changes sign (surface normals).
    * ``cam_K``: cx <- W - 1 - cx; ``cam_extrinsics``: first row negated (the camera x axis flips).
    """

    def __init__(self,
                 prob: float = 0.3,
                 map_keys: Optional[Iterable[str]] = None,
                 negate_x_keys: Sequence[str] = ()) -> None:
        self.prob = prob
        self.map_keys = map_keys
        self.negate_x_keys = tuple(negate_x_keys)

    def transform(self, results: dict) -> dict:
        results['flip'] = random.random() < self.prob
        if not results['flip']:
            return results
        width = results['img'].shape[1]
        for key in ['img'] + present_keys(results, self.map_keys):
            results[key] = np.ascontiguousarray(results[key][:, ::-1])
        for key in self.negate_x_keys:
            if key in results:
                results[key][..., 0] *= -1
        if 'cam_K' in results:
            results['cam_K'] = results['cam_K'].copy()
            results['cam_K'][0, 2] = width - 1 - results['cam_K'][0, 2]
        if 'cam_extrinsics' in results:
            results['cam_extrinsics'] = results['cam_extrinsics'].copy()
            results['cam_extrinsics'][0] *= -1
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(prob={self.prob}, negate_x_keys={self.negate_x_keys})'
