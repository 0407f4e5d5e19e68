"""Per-image tasks (seg and the projects' dense tasks): one data sample per image, converted to arrays."""
from typing import Dict, List, Optional

import numpy as np

from .base import BaseInferenceTask


class DenseInferenceTask(BaseInferenceTask):
    """A per-pixel task: each image goes through the test pipeline (letterbox or resize, as the config evaluates)
    and ``model.test_step``, whose predictions are already at the original image size.

    Subclasses implement :meth:`decode` (a predicted data sample -> named result arrays) and the drawing.
    """

    def predict(self, images: List[np.ndarray], **kwargs) -> List[dict]:
        return [self.decode(sample) for sample in self.test_step([dict(img=image) for image in images])]

    def decode(self, sample) -> dict:
        """A predicted data sample (e.g. ``pred_dense`` / ``pred_sem_seg`` at the original size) -> result dict of
        numpy arrays."""
        raise NotImplementedError

    @staticmethod
    def foreground(context: Optional[Dict[str, dict]]) -> Optional[np.ndarray]:
        """Foreground mask (H, W) bool from a body-part seg result on the same image, if one was computed."""
        seg = (context or {}).get('seg')
        return None if seg is None else seg['labels'] > 0
