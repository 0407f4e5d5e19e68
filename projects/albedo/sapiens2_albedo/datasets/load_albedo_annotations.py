"""Read the albedo and mask of a sample and apply the official validity rules."""
from typing import Optional

import cv2
import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.datasets.image_files import read_image_file
from sapiens2.datasets.transforms.dense_loading import check_same_size, read_mask
from sapiens2.registry import TRANSFORMS


@TRANSFORMS.register_module()
class LoadAlbedoAnnotations(BaseTransform):
    """Load ``gt_mask`` (bool) and ``gt_albedo`` (float32 HxWx3 RGB in [0, 1]).

    A sample is rejected (``None``, re-drawn in training) when the mask has fewer than ``min_valid_pixels`` pixels
    or when every channel's standard deviation over the mask is below ``min_std`` (a flat albedo).
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def __init__(self, min_valid_pixels: int = 16, min_std: float = 0.02) -> None:
        self.min_valid_pixels = min_valid_pixels
        self.min_std = min_std

    def transform(self, results: dict) -> Optional[dict]:
        albedo = read_image_file(results['albedo_path'], cv2.IMREAD_COLOR, what='albedo image')
        results['gt_albedo'] = albedo[..., ::-1].astype(np.float32) / 255.0
        results['gt_mask'] = read_mask(results['mask_path'])
        check_same_size(results, 'gt_albedo', results['albedo_path'])
        check_same_size(results, 'gt_mask', results['mask_path'])
        mask = results['gt_mask']
        if mask.sum() < self.min_valid_pixels or (results['gt_albedo'][mask].std(0) < self.min_std).all():
            return None
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(min_valid_pixels={self.min_valid_pixels}, min_std={self.min_std})'
