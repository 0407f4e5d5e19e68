"""People found without a detector: the connected regions of a shipped foreground model's person mask, as boxes.

Offline there is no person detector to download, and the whole image as one box puts a crowd's keypoints on trees.
The real-trained matting model (``matting-tiny``) separates people from the background on any photo; each region of
its mask large enough to be a person becomes a box, scored by its mean alpha. People who touch in the mask share one
box (a detector separates them: ``--det-config``). Measured in docs/performance.md (person boxes).
"""
from typing import Callable, Optional

import cv2
import numpy as np

DEFAULT_FINDER = 'matting-tiny'
MIN_AREA = 0.005  # a region smaller than this share of the image is no person (specks)
MAX_WIDTH_PER_HEIGHT = 5.0  # a wider region is a band, no person: the model's edge bands on flat or plain photos


def foreground_boxes(alpha: np.ndarray, threshold: float = 0.5, min_area: float = MIN_AREA) -> np.ndarray:
    """The boxes (N, 5) [x1, y1, x2, y2, score] of the 8-connected regions of ``alpha >= threshold`` that cover at
    least ``min_area`` of the image and are at most :data:`MAX_WIDTH_PER_HEIGHT` times wider than high, score their
    mean alpha, largest first. ``alpha``: (H, W) in [0, 1]."""
    mask = (np.asarray(alpha) >= threshold).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    keep = [i for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= min_area * mask.size
            and stats[i, cv2.CC_STAT_WIDTH] <= MAX_WIDTH_PER_HEIGHT * stats[i, cv2.CC_STAT_HEIGHT]]
    keep.sort(key=lambda i: -stats[i, cv2.CC_STAT_AREA])
    sums = np.bincount(labels.ravel(), weights=np.asarray(alpha, np.float64).ravel(), minlength=count)  # one pass
    boxes = np.zeros((len(keep), 5), np.float32)
    for row, i in enumerate(keep):
        x, y, w, h, area = stats[i]
        boxes[row] = (x, y, x + w, y + h, sums[i] / area)
    return boxes


class ForegroundPersonFinder:
    """Person boxes (N, 5) of a BGR image from a foreground model (matting: ``alpha``; seg: labels > 0), built at
    its first call so that runs with boxes never load it.

    Args:
        model: An alias or config of a matting or body-part seg model (default the shipped ``matting-tiny``).
        weights: Its checkpoint (an alias brings its own).
        device, dtype: As the task's model.
        threshold, min_area: The foreground's alpha threshold and a region's least share of the image.
    """

    def __init__(self, model: str = DEFAULT_FINDER, weights: Optional[str] = None, device: Optional[str] = None,
                 dtype: str = 'fp32', threshold: float = 0.5, min_area: float = MIN_AREA) -> None:
        self.model, self.weights, self.device, self.dtype = model, weights, device, dtype
        self.threshold, self.min_area = threshold, min_area
        self._foreground: Optional[Callable[[np.ndarray], np.ndarray]] = None

    def __repr__(self) -> str:
        return f'the person finder ({self.model}\'s foreground regions)'

    def __call__(self, image: np.ndarray) -> np.ndarray:
        if self._foreground is None:
            self._foreground = self._build()
        return foreground_boxes(self._foreground(image), self.threshold, self.min_area)

    def _build(self) -> Callable[[np.ndarray], np.ndarray]:
        from .backends import build_model, plan_model  # imported when first used, as the model is built
        from .tasks.lookup import build_task
        plan = plan_model(self.model, self.weights, self.device, self.dtype)
        net = build_model(plan, None)
        task = build_task(net, net.cfg, plan.dtype)
        if task.name not in ('matting', 'seg'):
            raise ValueError(f'person finder {self.model}: a {task.name} model has no person foreground; give a '
                             'matting or body-part seg model (e.g. matting-tiny)')

        def foreground(image: np.ndarray) -> np.ndarray:
            result = task.predict([image])[0]
            return result['alpha'] if task.name == 'matting' else (result['labels'] > 0).astype(np.float32)

        return foreground
