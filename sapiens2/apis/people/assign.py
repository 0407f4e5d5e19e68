"""Split the people's foreground (seg or matting) into one disjoint mask per person.

Each person is seeded by its skeleton (the layout's links between its confident keypoints, and those keypoints),
or, without keypoints, by the vertical centre line of its box. A foreground pixel inside one or more of the people's
boxes goes to the person whose seeds are nearest (Euclidean, in pixels); a pixel in no box goes to nobody. So two
overlapping people get disjoint masks, split where their skeletons are equally far.
"""
from typing import Optional, Sequence, Tuple

import cv2
import numpy as np

#: Boxes are widened by this share of their size on each side (0: the boxes bound the people, as the detector's and
#: the tracked boxes do; measured best with tight boxes in benchmarks/people.py).
BOX_MARGIN = 0.0


def person_seeds(shape: Tuple[int, int], box: np.ndarray, keypoints: Optional[np.ndarray] = None,
                 scores: Optional[np.ndarray] = None, kpt_thr: float = 0.3,
                 links: Sequence[Sequence[int]] = ()) -> np.ndarray:
    """(H, W) bool: the skeleton of the confident keypoints inside the person's box (at least two), else the box's
    vertical centre line."""
    seeds = np.zeros(shape, np.uint8)
    confident = None
    if keypoints is not None and scores is not None:
        x1, y1, x2, y2 = box[:4]
        confident = ((scores > kpt_thr) & (keypoints[:, 0] >= x1) & (keypoints[:, 0] <= x2) & (keypoints[:, 1] >= y1)
                     & (keypoints[:, 1] <= y2))
    if confident is not None and confident.sum() >= 2:
        points = np.round(keypoints).astype(np.int32)
        for a, b in links:
            if confident[a] and confident[b]:
                cv2.line(seeds, tuple(map(int, points[a])), tuple(map(int, points[b])), 1, 1)
        for x, y in points[confident]:
            if 0 <= y < shape[0] and 0 <= x < shape[1]:
                seeds[y, x] = 1
    if not seeds.any():
        x1, y1, x2, y2 = box[:4]
        centre = int(round((x1 + x2) / 2))
        cv2.line(seeds, (centre, int(round(y1 + 0.2 * (y2 - y1)))), (centre, int(round(y1 + 0.8 * (y2 - y1)))), 1, 1)
    return seeds.astype(bool)


def box_window(shape: Tuple[int, int], box: np.ndarray, margin: float = BOX_MARGIN) -> Tuple[slice, slice]:
    """The rows and columns of :func:`box_region` (empty slices for a box off the image)."""
    x1, y1, x2, y2 = (float(v) for v in box[:4])
    dx, dy = margin * (x2 - x1), margin * (y2 - y1)
    top, bottom = max(int(np.floor(y1 - dy)), 0), min(int(np.ceil(y2 + dy)) + 1, shape[0])
    left, right = max(int(np.floor(x1 - dx)), 0), min(int(np.ceil(x2 + dx)) + 1, shape[1])
    return slice(top, max(top, bottom)), slice(left, max(left, right))


def box_region(shape: Tuple[int, int], box: np.ndarray, margin: float = BOX_MARGIN) -> np.ndarray:
    """(H, W) bool: the pixels of ``box`` (xyxy) widened by ``margin`` of its size on each side."""
    region = np.zeros(shape, bool)
    region[box_window(shape, box, margin)] = True
    return region


def assign_masks(foreground: np.ndarray, boxes: np.ndarray, keypoints: Optional[np.ndarray] = None,
                 scores: Optional[np.ndarray] = None, kpt_thr: float = 0.3,
                 links: Sequence[Sequence[int]] = ()) -> Tuple[np.ndarray, np.ndarray]:
    """Disjoint person masks (N, H, W) bool from ``foreground`` (H, W) bool, and each mask's score (N,): the share
    of the person's seed pixels that its mask covers (1: the mask agrees with the pose; 0: it misses it).

    People are taken one at a time (the nearest seed so far per pixel, within each person's box; ties go to the
    first), so the memory besides the masks is that of a few (H, W) maps, whatever the number of people."""
    shape = foreground.shape[:2]
    count = len(boxes)
    if not count:
        return np.zeros((0, ) + shape, bool), np.zeros(0, np.float32)
    nearest = np.full(shape, np.inf, np.float32)
    owner = np.full(shape, -1, np.int32)
    seed_pixels = []
    for n in range(count):
        seeds = person_seeds(shape, boxes[n], None if keypoints is None else keypoints[n],
                             None if scores is None else scores[n], kpt_thr, links)
        seed_pixels.append(np.flatnonzero(seeds))
        window = box_window(shape, boxes[n])
        if not seeds[window].size:
            continue
        # every seed lies in the person's box, so the distance to the nearest one is the same in the window
        distance = cv2.distanceTransform((~seeds[window]).astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
        closer = distance < nearest[window]
        nearest[window][closer] = distance[closer]
        owner[window][closer] = n
    owner[~foreground] = -1
    masks = np.stack([owner == n for n in range(count)])
    owned = owner.reshape(-1)
    mask_scores = np.array([(owned[pixels] == n).mean() if len(pixels) else 0.0
                            for n, pixels in enumerate(seed_pixels)], np.float32)
    return masks, mask_scores
