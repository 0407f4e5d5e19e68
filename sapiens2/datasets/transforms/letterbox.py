"""The ``Letterbox`` data transform (geometry in :mod:`sapiens2.structures.letterbox`)."""
from typing import Dict, Optional, Sequence

import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS
from sapiens2.structures.letterbox import letterbox, update_intrinsics


@TRANSFORMS.register_module()
class Letterbox(BaseTransform):
    """Letterbox ``img`` (and dense ground truth) to ``size`` = (H, W), recording the padding.

    Writes ``img_shape``, ``letterbox_pad`` (left, right, top, bottom) and ``letterbox_scale`` (sx, sy), and updates
    ``cam_K`` when present. With ``test_mode`` the ground-truth maps keep their original size (evaluation happens at
    the original resolution after :func:`unletterbox`) and the original intrinsics are kept as ``gt_cam_K``.

    Args:
        size: Network input (H, W).
        map_interpolations: Ground-truth keys to letterbox with their interpolation, e.g.
            ``dict(gt_mask='nearest', gt_normal='nearest')``. Missing keys are skipped.
        interpolation: Image interpolation.
        test_mode: Keep ground truth at the original size.
    """

    def __init__(self,
                 size: Sequence[int],
                 map_interpolations: Optional[Dict[str, str]] = None,
                 interpolation: str = 'bilinear',
                 test_mode: bool = False) -> None:
        self.size = tuple(size)
        self.map_interpolations = dict(gt_mask='nearest') if map_interpolations is None else map_interpolations
        self.interpolation = interpolation
        self.test_mode = test_mode

    def transform(self, results: dict) -> dict:
        img = results['img']
        src_h, src_w = img.shape[:2]
        results['img'], pad = letterbox(img, self.size, self.interpolation)
        new_w = self.size[1] - pad[0] - pad[1]
        new_h = self.size[0] - pad[2] - pad[3]
        scale = (new_w / src_w, new_h / src_h)
        results.update(img_shape=self.size, letterbox_pad=pad, letterbox_scale=scale)
        if not self.test_mode:
            for key, interpolation in self.map_interpolations.items():
                if key in results:
                    results[key] = letterbox(results[key], self.size, interpolation)[0]
        if 'cam_K' in results:
            if self.test_mode:
                results['gt_cam_K'] = np.array(results['cam_K'], dtype=np.float64)
            results['cam_K'] = update_intrinsics(results['cam_K'], scale, pad[::2])
        return results

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(size={self.size}, map_interpolations={self.map_interpolations}, '
                f'test_mode={self.test_mode})')
