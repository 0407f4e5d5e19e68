"""Training-time rejection of dense samples with too little or too much valid area (as the official packers do)."""
from typing import Optional

from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS


@TRANSFORMS.register_module()
class FilterDenseSample(BaseTransform):
    """Return ``None`` (the dataset re-draws another sample in training) when ``gt_mask`` has fewer than
    ``min_valid_pixels`` valid pixels or covers more than ``max_coverage`` of the image.
    """

    def __init__(self, min_valid_pixels: int = 16, max_coverage: float = 0.96) -> None:
        self.min_valid_pixels = min_valid_pixels
        self.max_coverage = max_coverage

    def transform(self, results: dict) -> Optional[dict]:
        mask = results['gt_mask']
        valid = int(mask.sum())
        if valid < self.min_valid_pixels or valid > self.max_coverage * mask.size:
            return None
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(min_valid_pixels={self.min_valid_pixels}, max_coverage={self.max_coverage})'
