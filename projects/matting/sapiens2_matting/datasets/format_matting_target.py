"""Stack the matting maps into the one target tensor that ``PackDenseInputs`` packs (``gt_matting``)."""
import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS


@TRANSFORMS.register_module()
class FormatMattingTarget(BaseTransform):
    """Set ``gt_matting`` (H, W, C) float32 in the layout of :mod:`sapiens2_matting.matting_channels`.

    Channels: alpha, pre-multiplied RGB foreground, trimap (0 / 0.5 / 1); with ``with_composition`` (training) also
    the RGB background and the RGB ``gt_image``. A foreground or background the sample does not have is NaN, which
    the losses and the metric leave out.
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def __init__(self, with_composition: bool = True) -> None:
        self.with_composition = with_composition

    @staticmethod
    def _require(results: dict, key: str, hint: str) -> np.ndarray:
        if key not in results:
            raise KeyError(f'FormatMattingTarget needs results[{key!r}]; {hint} (available keys: {sorted(results)})')
        return results[key]

    def transform(self, results: dict) -> dict:
        alpha = self._require(results, 'gt_alpha', 'put LoadMattingAnnotations first')
        trimap = self._require(results, 'gt_trimap', 'add GenerateTrimap after the geometric transforms')
        height, width = alpha.shape[:2]
        missing = np.full((height, width, 3), np.nan, np.float32)
        trimap_unit = np.where(trimap == 0, 0.0, np.where(trimap == 255, 1.0, 0.5)).astype(np.float32)
        parts = [alpha.reshape(height, width, 1), results.get('gt_foreground', missing), trimap_unit[..., None]]
        if self.with_composition:
            image = self._require(results, 'gt_image', 'put LoadMattingAnnotations first')
            parts += [results.get('gt_background', missing), image[..., ::-1].astype(np.float32) / 255.0]
        results['gt_matting'] = np.concatenate([np.asarray(p, np.float32) for p in parts], axis=2)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(with_composition={self.with_composition})'
