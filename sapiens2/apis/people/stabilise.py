"""Video: per-track temporal stabilisation of person masks and smoothing of 3D keypoints.

Masks: each track keeps a soft mask, moved with the track's box from frame to frame (scale and shift) and blended
with the new mask (exponential moving average, weight ``ALPHA``). Near the new mask's edge (within ``RIM_PER_256``
pixels per 256 of the image's shorter side, at least 2), where a model's masks flicker, a pixel turns on above
``ON`` and off below ``OFF`` (hysteresis), so a still person's mask stops changing once its soft mask has settled;
away from the edge the new mask holds as it is, so a moving limb is not dragged behind. A pixel two tracks claim goes
to the one whose soft mask is higher (masks stay disjoint).
3D keypoints: a One-Euro filter per track (:mod:`sapiens2.apis.pose_video.smoothing`), speeds in metres per second.
"""
from typing import Dict, Sequence, Tuple

import cv2
import numpy as np

from ..pose_video.smoothing import DEFAULT_BETA, DEFAULT_MIN_CUTOFF, OneEuroFilter

ALPHA = 0.2
ON, OFF = 0.6, 0.3
RIM_PER_256 = 2


def rim(mask: np.ndarray) -> np.ndarray:
    """(H, W) bool: the pixels within the rim width of the edge of ``mask``, inside or outside."""
    width = max(2, int(round(RIM_PER_256 * min(mask.shape) / 256)))
    inside = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 3)
    outside = cv2.distanceTransform((~mask).astype(np.uint8), cv2.DIST_L2, 3)
    return np.where(mask, inside, outside) <= width


def _box_motion(previous: np.ndarray, current: np.ndarray) -> np.ndarray:
    """The 2x3 affine (scale + shift per axis) that maps box ``previous`` onto box ``current`` (xyxy)."""
    scale = [(current[2] - current[0]) / max(previous[2] - previous[0], 1e-6),
             (current[3] - current[1]) / max(previous[3] - previous[1], 1e-6)]
    return np.array([[scale[0], 0, current[0] - scale[0] * previous[0]],
                     [0, scale[1], current[1] - scale[1] * previous[1]]], np.float32)


class MaskStabiliser:
    """Per-track soft masks of one video (see the module docstring)."""

    def __init__(self, alpha: float = ALPHA, on: float = ON, off: float = OFF) -> None:
        self.alpha, self.on, self.off = alpha, on, off
        self.tracks: Dict[int, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # id -> (soft, state, box)

    def update(self, track_ids: Sequence[int], masks: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """The stabilised masks (N, H, W) bool of one frame's tracks ``track_ids`` (N,) given their masks and boxes."""
        softs, states = [], []
        for track_id, mask, box in zip(track_ids, masks, boxes):
            box = np.asarray(box[:4], np.float32)
            previous = self.tracks.get(int(track_id))
            if previous is None or previous[0].shape != mask.shape:
                soft, state = mask.astype(np.float32), mask.copy()
            else:
                moved = [cv2.warpAffine(a.astype(np.float32), _box_motion(previous[2], box), mask.shape[::-1],
                                        flags=cv2.INTER_LINEAR) for a in previous[:2]]
                soft = (1 - self.alpha) * moved[0] + self.alpha * mask
                state = np.where(moved[1] > 0.5, soft > self.off, soft > self.on)
                state = np.where(rim(mask), state, mask)
            self.tracks[int(track_id)] = (soft, state, box)
            softs.append(soft)
            states.append(state)
        self.tracks = {i: v for i, v in self.tracks.items() if i in {int(t) for t in track_ids}}
        if not softs:
            return masks
        softs, states = np.stack(softs), np.stack(states)
        owner = np.argmax(np.where(states, softs, -1.0), axis=0)
        return np.stack([states[n] & (owner == n) for n in range(len(states))])


class Keypoint3DSmoother:
    """Per-track, per-keypoint One-Euro filters of one video's 3D keypoints; a keypoint that is ``NaN`` (not seen)
    stays ``NaN`` and leaves its filter as it was (it goes on from there when the keypoint is seen again)."""

    def __init__(self, min_cutoff: float = DEFAULT_MIN_CUTOFF, beta: float = DEFAULT_BETA) -> None:
        self.min_cutoff, self.beta = min_cutoff, beta
        self.filters: Dict[Tuple[int, int], OneEuroFilter] = {}

    def update(self, track_ids: Sequence[int], points: np.ndarray, time: float) -> np.ndarray:
        """Smoothed ``points`` (N, K, 3) of the tracks ``track_ids`` at ``time`` seconds."""
        smoothed = np.array(points, np.float32)
        for n, track_id in enumerate(int(t) for t in track_ids):
            for k in np.flatnonzero(~np.isnan(points[n]).any(-1)):
                key = (track_id, int(k))
                if key not in self.filters:
                    self.filters[key] = OneEuroFilter(self.min_cutoff, self.beta)
                smoothed[n, k] = self.filters[key](points[n, k], time)
        tracks = {int(t) for t in track_ids}
        self.filters = {key: f for key, f in self.filters.items() if key[0] in tracks}
        return smoothed
