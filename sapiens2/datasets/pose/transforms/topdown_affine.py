"""Top-down affine crop with the official Sapiens2 interpolation and out-of-crop handling."""
from typing import Optional, Tuple

import cv2
import numpy as np
from mmpose.datasets.transforms import TopdownAffine
from mmpose.registry import TRANSFORMS
from mmpose.structures.bbox import get_udp_warp_matrix, get_warp_matrix


@TRANSFORMS.register_module()
class Sapiens2TopdownAffine(TopdownAffine):
    """mmpose ``TopdownAffine`` that resamples as the official release: INTER_AREA when the crop shrinks the image
    (output/bbox scale < 1), INTER_CUBIC otherwise (mmpose always uses bilinear).

    Args:
        input_size: Output (w, h).
        use_udp: Use the unbiased (UDP) warp matrix, as every Sapiens2 pose config does.
        drop_outside: Zero the transformed keypoints that land outside the crop and mark them invisible (the
            official training behaviour, so they get target weight 0). Keep False for validation, where the
            visibility flags are also the ground truth of the metrics.
    """

    def __init__(self, input_size: Tuple[int, int], use_udp: bool = True, drop_outside: bool = False) -> None:
        super().__init__(input_size=input_size, use_udp=use_udp)
        self.drop_outside = drop_outside

    def transform(self, results: dict) -> Optional[dict]:
        w, h = self.input_size
        results['bbox_scale'] = self._fix_aspect_ratio(results['bbox_scale'], aspect_ratio=w / h)
        if results['bbox_center'].shape[0] != 1:
            raise ValueError(f'{type(self).__name__} crops one instance; got {results["bbox_center"].shape[0]}.')
        center, scale = results['bbox_center'][0], results['bbox_scale'][0]
        rot = results['bbox_rotation'][0] if 'bbox_rotation' in results else 0.
        warp_fn = get_udp_warp_matrix if self.use_udp else get_warp_matrix
        warp_mat = warp_fn(center, scale, rot, output_size=(w, h))
        flags = cv2.INTER_AREA if w / scale[0] < 1 else cv2.INTER_CUBIC
        results['img'] = cv2.warpAffine(results['img'], warp_mat, (int(w), int(h)), flags=flags)

        if results.get('keypoints') is not None:
            keypoints = results['keypoints'].copy()
            keypoints[..., :2] = cv2.transform(results['keypoints'][..., :2], warp_mat)
            if self.drop_outside:
                self._drop_outside(results, keypoints, w, h)
            results['transformed_keypoints'] = keypoints
        else:
            results['transformed_keypoints'] = np.zeros([])
            results['keypoints_visible'] = np.ones((1, 1, 1))
        results.update(input_size=(w, h), input_center=center, input_scale=scale)
        return results

    @staticmethod
    def _drop_outside(results: dict, keypoints: np.ndarray, w: int, h: int) -> None:
        x, y = keypoints[..., 0], keypoints[..., 1]
        inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        keypoints[~inside] = 0
        visible = results['keypoints_visible']
        results['keypoints_visible'] = visible * (inside[..., None] if visible.ndim == 3 else inside)

    def __repr__(self) -> str:
        return (f'{type(self).__name__}(input_size={self.input_size}, use_udp={self.use_udp}, '
                f'drop_outside={self.drop_outside})')
