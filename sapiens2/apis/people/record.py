"""The person record: what one person's instance gains from the dense tasks (JSON-ready, one dict per person)."""
import math
from typing import List, Optional, Sequence

import numpy as np

from .rle import encode_mask

#: Words of the keypoint names that mark the head and the feet (any layout whose names use them; others get no
#: height).
HEAD_WORDS = ('nose', 'eye', 'ear', 'head')
FOOT_WORDS = ('ankle', 'heel', 'toe', 'foot')
#: Share of a person's mask rows at its top and at its bottom whose 3D points give the head and foot ends.
END_ROWS = 0.03


def named_indices(names: Optional[Sequence[str]], words: Sequence[str]) -> List[int]:
    """Indices of the keypoint ``names`` that contain one of ``words``."""
    return [i for i, name in enumerate(names or ()) if any(word in name.lower() for word in words)]


def depth_range(pointmap: np.ndarray, own: np.ndarray) -> Optional[List[float]]:
    """[near, far] metres: the 2nd and 98th percentile depth of the person's valid pixels ``own`` (H, W)."""
    depths = pointmap[..., 2][own]
    return [round(float(v), 4) for v in np.percentile(depths, (2, 98))] if len(depths) else None


def height_m(pointmap: np.ndarray, own: np.ndarray) -> Optional[float]:
    """The 3D distance (metres) between the median points of the top and the bottom rows of the person's valid
    pixels: a standing person's height (the caller checks that the head and the feet are in view)."""
    rows = np.flatnonzero(own.any(axis=1))
    if len(rows) < 2:
        return None
    band = max(1, int(math.ceil(END_ROWS * (rows[-1] - rows[0] + 1))))
    top = pointmap[rows[0]:rows[0] + band][own[rows[0]:rows[0] + band]]
    bottom = pointmap[rows[-1] - band + 1:rows[-1] + 1][own[rows[-1] - band + 1:rows[-1] + 1]]
    return round(float(np.linalg.norm(np.median(top, 0) - np.median(bottom, 0))), 4)


def _rounded(points: np.ndarray) -> list:
    return [None if np.isnan(p).any() else [round(float(v), 4) for v in p] for p in points]


def person_record(mask: Optional[np.ndarray] = None, mask_score: Optional[float] = None,
                  keypoints_3d: Optional[np.ndarray] = None, keypoints_3d_scores: Optional[np.ndarray] = None,
                  stats: Optional[dict] = None) -> dict:
    """``mask`` (COCO RLE), ``mask_score``, ``area``; ``keypoints_3d`` ([x, y, z] metres or null per keypoint),
    ``keypoints_3d_score``; and the ``stats`` (``depth_range``, ``height_m``) that apply."""
    record = {}
    if mask is not None:
        record.update(mask=encode_mask(mask), mask_score=round(float(mask_score), 4), area=int(mask.sum()))
    if keypoints_3d is not None:
        record.update(keypoints_3d=_rounded(keypoints_3d),
                      keypoints_3d_score=[round(float(v), 4) for v in keypoints_3d_scores])
    record.update(stats or {})
    return record
