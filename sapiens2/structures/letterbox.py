"""Letterbox geometry: resize keeping the aspect ratio and centre-pad (``letterbox``), and its inverse
(``unletterbox``).

The one definition used by the ``Letterbox`` data transform, by the dense heads when they map predictions back to the
original image, and by inference. It depends on numpy, OpenCV and torch only, so models need no data-layer import.
"""
from typing import Optional, Sequence, Tuple

import cv2
import numpy as np
import torch
import torch.nn.functional as F

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
