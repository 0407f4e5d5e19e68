"""Draw top-down keypoint predictions (skeleton links and points) in the colours of the model's layout."""
from typing import Optional, Sequence

import cv2
import numpy as np

from sapiens2.structures.layout import keypoint_style


def _scaled(size: Optional[int], image: np.ndarray, fraction: float) -> int:
    """An explicit size, or one proportional to the image's longer side (at least 1 px)."""
    return size if size is not None else max(1, int(round(max(image.shape[:2]) * fraction)))


def draw_keypoints(image: np.ndarray,
                   keypoints: np.ndarray,
                   scores: np.ndarray,
                   style: Optional[dict] = None,
                   kpt_thr: float = 0.3,
                   radius: Optional[int] = None,
                   thickness: Optional[int] = None,
                   bboxes: Optional[Sequence[Sequence[float]]] = None,
                   instance_colors: Optional[Sequence[Sequence[int]]] = None) -> np.ndarray:
    """Draw instances' skeletons on a copy of a BGR image.

    Args:
        image: (H, W, 3) uint8 BGR.
        keypoints: (N, K, 2) pixel coordinates (x, y).
        scores: (N, K); points and links with a score below ``kpt_thr`` are skipped.
        style: ``point_colors``/``links``/``link_colors`` (RGB) as from
            :func:`sapiens2.structures.layout.keypoint_style` of the model's ``dataset_meta``; default: that of a
            model without metainfo (the 308 style for 308 keypoints, plain points otherwise).
        radius, thickness: point radius and link width; default proportional to the image size.
        bboxes: optional (N, 4) xyxy boxes drawn in white.
        instance_colors: optional (N, 3) RGB, one colour per instance (e.g. per track) for its box and skeleton
            links; the points keep the style's colours.
    Returns:
        The drawn (H, W, 3) uint8 BGR image.
    """
    keypoints, scores = np.asarray(keypoints, dtype=np.float64), np.asarray(scores)
    if keypoints.ndim != 3 or keypoints.shape[:2] != scores.shape:
        raise ValueError(f'keypoints must be (N, K, 2) and scores (N, K), got {keypoints.shape} and {scores.shape}')
    style = style or keypoint_style(None, keypoints.shape[1])
    if keypoints.shape[1] != len(style['point_colors']):
        raise ValueError(f'{keypoints.shape[1]} keypoints but the style has {len(style["point_colors"])} colours')
    canvas = np.ascontiguousarray(image.copy())
    radius, thickness = _scaled(radius, image, 0.004), _scaled(thickness, image, 0.003)
    own = [_bgr(color) for color in instance_colors] if instance_colors is not None else None
    for n, box in enumerate(bboxes if bboxes is not None else []):
        x1, y1, x2, y2 = (int(round(v)) for v in box[:4])
        cv2.rectangle(canvas, (x1, y1), (x2, y2), own[n] if own else (255, 255, 255), max(1, thickness // 2))
    for n, (kpts, kpt_scores) in enumerate(zip(keypoints, scores)):
        visible = (kpt_scores >= kpt_thr) & np.isfinite(kpts).all(-1)
        pts = np.round(kpts).astype(np.int64)
        for (a, b), color in zip(style['links'], style['link_colors']):
            if visible[a] and visible[b]:
                cv2.line(canvas, tuple(map(int, pts[a])), tuple(map(int, pts[b])), own[n] if own else _bgr(color),
                         thickness, cv2.LINE_AA)
        for idx in np.flatnonzero(visible):
            cv2.circle(canvas, tuple(map(int, pts[idx])), radius, _bgr(style['point_colors'][idx]), -1, cv2.LINE_AA)
    return canvas


def _bgr(rgb) -> tuple:
    return int(rgb[2]), int(rgb[1]), int(rgb[0])
