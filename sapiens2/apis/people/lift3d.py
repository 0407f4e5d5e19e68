"""3D keypoints in metres, camera frame, from a pointmap: each keypoint's own person's surface along its ray.

The pointmap implies a pinhole camera (a point (x, y, z) seen at pixel (u, v) has u = fx x / z + cx, v = fy y / z +
cy): :func:`pointmap_camera` fits it on the people's pixels (a model trained on people predicts no camera on the
background). A keypoint's depth is read from the valid pointmap pixels of its person's own
mask in a small window around it (not the background, not another person): the depth of the keypoint's own pixel
when that is one of them and at least ``MIN_AGREEING`` other lies within ``AGREE_M`` of it (a surface, not a lone
outlier at an edge), else their median. Its 3D point lies on the ray
through its 2D position at that depth, so it projects back onto the 2D keypoint. ``NaN`` (``null`` in JSON)
where the keypoint is not confident or its window holds no valid pixel of its person.
"""
from typing import Optional, Tuple

import numpy as np

#: Half size (pixels) of the window a keypoint's depth is taken from, per 256 pixels of the image's shorter side.
WINDOW_RADIUS_PER_256 = 2
#: The keypoint's own pixel is trusted when this many other pixels of its window lie within ``AGREE_M`` metres of it.
MIN_AGREEING, AGREE_M = 1, 0.03
#: Least-squares rounds of the camera fit, each without the pixels 3 median residuals off the previous line.
FIT_ROUNDS = 3
#: Pointmap pixels the camera fit uses at most (a regular subsample).
CAMERA_FIT_PIXELS = 20000


def window_radius(shape: Tuple[int, int]) -> int:
    """The window's half size for an image of ``shape`` (at least 1 pixel)."""
    return max(1, int(round(WINDOW_RADIUS_PER_256 * min(shape[:2]) / 256)))


def pointmap_camera(pointmap: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The 3x3 intrinsics (fx, fy, cx, cy; least squares, robust to outliers) of the pinhole camera the pointmap
    (H, W, 3) implies on its ``valid`` (H, W) pixels in front of the camera."""
    z = pointmap[..., 2]
    rows, cols = np.nonzero(valid & (z > 1e-6))
    if len(rows) < 2:
        raise ValueError('the pointmap has fewer than 2 valid pixels in front of the camera: no camera to fit')
    step = max(1, len(rows) // CAMERA_FIT_PIXELS)
    rows, cols = rows[::step], cols[::step]
    points = pointmap[rows, cols].astype(np.float64)
    K = np.eye(3)
    for axis, pixels in ((0, cols), (1, rows)):
        ratio, pixels = points[:, axis] / points[:, 2], pixels.astype(np.float64)
        keep = np.ones(len(ratio), bool)
        for _ in range(FIT_ROUNDS):  # refit without the pixels far off the line (a model's outliers)
            design = np.stack([ratio[keep], np.ones(keep.sum())], 1)
            (K[axis, axis], K[axis, 2]), *_ = np.linalg.lstsq(design, pixels[keep], rcond=None)
            residual = np.abs(K[axis, axis] * ratio + K[axis, 2] - pixels)
            keep = residual <= max(3 * np.median(residual[keep]), 1.0)
    return K


def lift_keypoints(pointmap: np.ndarray, valid: np.ndarray, keypoints: np.ndarray, confident: np.ndarray,
                   masks: Optional[np.ndarray] = None, radius: Optional[int] = None,
                   K: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """3D keypoints (N, K, 3) in metres (NaN where not confident or invalid) and their support (N, K) in [0, 1]: the
    share of the window's pixels that are valid pixels of the person's own mask (``masks`` (N, H, W); None: any
    valid pixel)."""
    height, width = valid.shape
    radius = window_radius(valid.shape) if radius is None else radius
    K = pointmap_camera(pointmap, valid) if K is None else K
    count, num_keypoints = keypoints.shape[:2]
    points = np.full((count, num_keypoints, 3), np.nan, np.float32)
    support = np.zeros((count, num_keypoints), np.float32)
    depth = pointmap[..., 2]
    size = (2 * radius + 1) ** 2
    for n in range(count):
        own = valid if masks is None else valid & masks[n]
        for k in np.flatnonzero(confident[n]):
            u, v = keypoints[n, k]
            col, row = int(round(u)), int(round(v))
            if not (0 <= col < width and 0 <= row < height):
                continue
            window = np.s_[max(row - radius, 0):row + radius + 1, max(col - radius, 0):col + radius + 1]
            depths = depth[window][own[window]]
            if not len(depths):
                continue
            centre = float(depth[row, col])
            agreeing = int((np.abs(depths - centre) <= AGREE_M).sum()) - 1 if own[row, col] else -1
            z = centre if agreeing >= MIN_AGREEING else float(np.median(depths))
            points[n, k] = (z * (u - K[0, 2]) / K[0, 0], z * (v - K[1, 2]) / K[1, 1], z)
            support[n, k] = len(depths) / size
    return points, support


def sample_at_keypoints(pointmap: np.ndarray, valid: np.ndarray, keypoints: np.ndarray,
                        confident: np.ndarray) -> np.ndarray:
    """The naive reading (the baseline of ``benchmarks/people.py``): the pointmap at each keypoint's nearest pixel,
    whoever it shows (NaN where not confident, outside the image or invalid)."""
    height, width = valid.shape
    cols, rows = np.round(keypoints[..., 0]).astype(int), np.round(keypoints[..., 1]).astype(int)
    inside = confident & (cols >= 0) & (cols < width) & (rows >= 0) & (rows < height)
    rows, cols = np.clip(rows, 0, height - 1), np.clip(cols, 0, width - 1)
    points = pointmap[rows, cols].astype(np.float32)
    points[~(inside & valid[rows, cols])] = np.nan
    return points
