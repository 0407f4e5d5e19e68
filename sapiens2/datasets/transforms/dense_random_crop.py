"""Random crop of continuous aspect and area for dense samples."""
import math
import random
from typing import Iterable, Optional, Sequence, Tuple

from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS

from .dense_keys import present_keys


@TRANSFORMS.register_module()
class DenseRandomCropContinuous(BaseTransform):
    """With probability ``prob``, crop a window of aspect (w/h) ~ U(``aspect_range``) and area fraction
    ~ U(``area_range``), trying ``max_attempts`` draws and skipping if none fits.

    The offset is uniform over every valid position (the original can draw one past the end; see docs/differences.md).
    ``cam_K``'s principal point is shifted by the offset.
    """

    def __init__(self,
                 prob: float = 0.3,
                 aspect_range: Sequence[float] = (0.5, 2.0),
                 area_range: Sequence[float] = (0.4, 1.0),
                 max_attempts: int = 8,
                 map_keys: Optional[Iterable[str]] = None) -> None:
        self.prob = prob
        self.aspect_range = tuple(aspect_range)
        self.area_range = tuple(area_range)
        self.max_attempts = max_attempts
        self.map_keys = map_keys

    def _draw_window(self, height: int, width: int) -> Optional[Tuple[int, int, int, int]]:
        for _ in range(self.max_attempts):
            area = random.uniform(*self.area_range) * height * width
            aspect = random.uniform(*self.aspect_range)
            crop_h, crop_w = int(round(math.sqrt(area / aspect))), int(round(math.sqrt(area * aspect)))
            if 0 < crop_h <= height and 0 < crop_w <= width:
                return random.randint(0, width - crop_w), random.randint(0, height - crop_h), crop_w, crop_h
        return None

    def transform(self, results: dict) -> dict:
        if random.random() >= self.prob:
            return results
        window = self._draw_window(*results['img'].shape[:2])
        if window is None:
            return results
        x0, y0, crop_w, crop_h = window
        for key in ['img'] + present_keys(results, self.map_keys):
            results[key] = results[key][y0:y0 + crop_h, x0:x0 + crop_w].copy()
        if 'cam_K' in results:
            results['cam_K'] = results['cam_K'].copy()
            results['cam_K'][0, 2] -= x0
            results['cam_K'][1, 2] -= y0
        results['img_shape'] = (crop_h, crop_w)
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(prob={self.prob}, aspect_range={self.aspect_range}, '
                f'area_range={self.area_range})')
