"""Turn dense predictions (part labels, normals, depth, albedo) into BGR pictures."""
from typing import Optional, Sequence, Tuple

import cv2
import numpy as np

from sapiens2.structures.layout import class_palette


def overlay_labels(image: np.ndarray, labels: np.ndarray, palette: Optional[np.ndarray] = None,
                   opacity: float = 0.5) -> np.ndarray:
    """Blend a colour-coded label map (H, W) over a BGR image (``opacity`` = weight of the palette colour).

    ``palette``: (N, 3) RGB, the model's (:func:`sapiens2.structures.layout.class_palette` of its ``dataset_meta``);
    default: that of a model without metainfo."""
    palette = class_palette(None) if palette is None else np.asarray(palette, dtype=np.uint8)
    if labels.shape != image.shape[:2]:
        raise ValueError(f'label map {labels.shape} does not match the image {image.shape[:2]}')
    if labels.size and int(labels.max()) >= len(palette):
        raise ValueError(f'label {int(labels.max())} has no colour in a palette of {len(palette)}')
    color = palette[labels][..., ::-1].astype(np.float32)
    blended = image.astype(np.float32) * (1 - opacity) + color * opacity
    return np.clip(np.round(blended), 0, 255).astype(np.uint8)


def normals_to_bgr(normals: np.ndarray, mask: Optional[np.ndarray] = None,
                   background: Optional[np.ndarray] = None) -> np.ndarray:
    """Unit normals (H, W, 3), xyz in the camera frame, to the usual (n + 1) / 2 RGB picture, as BGR uint8.

    Pixels outside ``mask`` are black, or taken from ``background`` (a BGR image) when given.
    """
    rgb = np.clip((normals + 1.0) * 0.5 * 255.0, 0, 255).round().astype(np.uint8)
    return _masked(rgb[..., ::-1], mask, background)


def valid_depth(depth: np.ndarray) -> np.ndarray:
    """Where a depth map (H, W) is physically possible: finite and > 0 (in front of the camera). The one rule of the
    pictures, point clouds and validity masks of depth predictions."""
    with np.errstate(invalid='ignore'):
        return np.isfinite(depth) & (depth > 0)


def depth_bounds(depths: Sequence[np.ndarray], masks: Optional[Sequence[np.ndarray]] = None,
                 percentiles: Tuple[float, float] = (1, 99), limits: Tuple[float, float] = (0.1, 250.0)
                 ) -> Tuple[float, float]:
    """Depth range for colouring several frames alike: min of the low percentiles, max of the high ones, clipped
    to ``limits`` (metres)."""
    lows, highs = [], []
    for i, depth in enumerate(depths):
        valid = depth[valid_depth(depth) if masks is None else masks[i] & valid_depth(depth)]
        if valid.size:
            lows.append(np.percentile(valid, percentiles[0]))
            highs.append(np.percentile(valid, percentiles[1]))
    if not lows:
        return limits
    low, high = float(np.clip(min(lows), *limits)), float(np.clip(max(highs), *limits))
    return low, max(high, low + 1e-6)


def depth_to_bgr(depth: np.ndarray, mask: Optional[np.ndarray] = None,
                 bounds: Optional[Tuple[float, float]] = None) -> np.ndarray:
    """Metric depth (H, W) to a turbo colour map of inverse depth (near = red), BGR uint8; pixels outside ``mask``
    and of impossible depth (:func:`valid_depth`) black."""
    mask = valid_depth(depth) if mask is None else mask & valid_depth(depth)
    near, far = bounds if bounds is not None else depth_bounds([depth], [mask])
    inv = 1.0 / np.clip(np.where(mask, depth, far), near, far)
    scaled = (inv - 1.0 / far) / max(1.0 / near - 1.0 / far, 1e-12)
    gray = np.clip(scaled * 255.0, 0, 255).round().astype(np.uint8)
    return _masked(cv2.applyColorMap(gray, cv2.COLORMAP_TURBO), mask, None)


def albedo_to_bgr(albedo: np.ndarray, mask: Optional[np.ndarray] = None, gray: int = 100) -> np.ndarray:
    """Albedo (H, W, 3) RGB in [0, 1] to a BGR uint8 picture; background grey (``gray``)."""
    rgb = np.clip(albedo, 0.0, 1.0) * 255.0
    bgr = rgb[..., ::-1].round().astype(np.uint8)
    return _masked(bgr, mask, np.full_like(bgr, gray))


def side_by_side(*images: np.ndarray) -> np.ndarray:
    """Concatenate same-height BGR images horizontally."""
    return np.concatenate([np.ascontiguousarray(im) for im in images], axis=1)


def _masked(picture: np.ndarray, mask: Optional[np.ndarray], background: Optional[np.ndarray]) -> np.ndarray:
    picture = np.ascontiguousarray(picture)
    if mask is None:
        return picture
    fill = np.zeros_like(picture) if background is None else background
    return np.where(mask[..., None].astype(bool), picture, fill).astype(np.uint8)
