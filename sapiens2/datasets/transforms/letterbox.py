"""Letterbox resize (keep aspect, centre-pad) that records its padding, and the inverse ``unletterbox``.

One pair of functions serves training, evaluation and inference: ``letterbox`` maps an image to the network input,
``unletterbox`` maps a prediction at the network input back onto the original image.
"""
from typing import Dict, Optional, Sequence, Tuple

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from mmcv.transforms import BaseTransform

from sapiens2.registry import TRANSFORMS

Padding = Tuple[int, int, int, int]  # (left, right, top, bottom)

INTERPOLATIONS = {
    'nearest': cv2.INTER_NEAREST,
    'bilinear': cv2.INTER_LINEAR,
    'bicubic': cv2.INTER_CUBIC,
    'area': cv2.INTER_AREA,
}


def letterbox_geometry(src_hw: Sequence[int], dst_hw: Sequence[int]) -> Tuple[Tuple[int, int], Padding]:
    """Resized size (h, w) and centred padding (left, right, top, bottom) to fit ``src_hw`` into ``dst_hw``."""
    (h, w), (dst_h, dst_w) = src_hw, dst_hw
    scale = min(dst_h / h, dst_w / w)
    new_h = min(dst_h, max(1, int(round(h * scale))))
    new_w = min(dst_w, max(1, int(round(w * scale))))
    top, left = (dst_h - new_h) // 2, (dst_w - new_w) // 2
    return (new_h, new_w), (left, dst_w - new_w - left, top, dst_h - new_h - top)


def letterbox(array: np.ndarray,
              dst_hw: Sequence[int],
              interpolation: str = 'bilinear',
              pad_value: float = 0) -> Tuple[np.ndarray, Padding]:
    """Resize ``array`` (H, W[, C]) keeping its aspect ratio and centre-pad it to ``dst_hw``.

    Boolean arrays are resized as uint8 and returned as bool.

    Returns:
        The letterboxed array and the padding (left, right, top, bottom).
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f'Unknown interpolation {interpolation!r}; choose one of {sorted(INTERPOLATIONS)}.')
    (new_h, new_w), pad = letterbox_geometry(array.shape[:2], dst_hw)
    is_bool = array.dtype == bool
    src = array.astype(np.uint8) if is_bool else array
    resized = cv2.resize(src, (new_w, new_h), interpolation=INTERPOLATIONS[interpolation])
    if resized.ndim < array.ndim:
        resized = resized[..., None]
    left, right, top, bottom = pad
    widths = ((top, bottom), (left, right)) + ((0, 0), ) * (resized.ndim - 2)
    out = np.pad(resized, widths, constant_values=pad_value)
    return (out.astype(bool) if is_bool else out), pad


def unletterbox(pred: torch.Tensor,
                pad: Sequence[int],
                ori_shape: Sequence[int],
                mode: str = 'bilinear',
                input_shape: Optional[Sequence[int]] = None) -> torch.Tensor:
    """Crop the letterbox padding off ``pred`` (..., C, H, W) and resize it to ``ori_shape`` (H, W).

    Args:
        pred: A (C, H, W) or (B, C, H, W) prediction over the letterboxed input.
        pad: (left, right, top, bottom) as recorded by :func:`letterbox`, in input pixels.
        ori_shape: The original (H, W).
        mode: ``F.interpolate`` mode.
        input_shape: The letterboxed input (H, W) when the prediction has another resolution (e.g. a head that
            outputs half the input size); the padding is scaled to the prediction.
    """
    height, width = pred.shape[-2:]
    if input_shape is not None:
        sx, sy = width / input_shape[1], height / input_shape[0]
        pad = (pad[0] * sx, pad[1] * sx, pad[2] * sy, pad[3] * sy)
    left, right, top, bottom = (int(round(p)) for p in pad)
    if left + right >= width or top + bottom >= height:
        raise ValueError(f'Letterbox padding {tuple(pad)} leaves nothing of a {height}x{width} prediction.')
    crop = pred[..., top:height - bottom, left:width - right]
    batched = crop if crop.dim() == 4 else crop[None]
    align = dict(align_corners=False) if mode in ('bilinear', 'bicubic') else {}
    out = F.interpolate(batched, size=tuple(int(s) for s in ori_shape[:2]), mode=mode, **align)
    return out if crop.dim() == 4 else out[0]


def update_intrinsics(cam_k: np.ndarray, scale_xy: Sequence[float], offset_xy: Sequence[float]) -> np.ndarray:
    """Intrinsics after scaling pixels by ``scale_xy`` and then shifting them by ``offset_xy``."""
    cam_k = np.array(cam_k, dtype=np.float64)
    cam_k[0, [0, 2]] *= scale_xy[0]
    cam_k[1, [1, 2]] *= scale_xy[1]
    cam_k[0, 2] += offset_xy[0]
    cam_k[1, 2] += offset_xy[1]
    return cam_k


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
