"""Validation pictures of predicted albedo."""
from typing import Optional

import numpy as np

from sapiens2.registry import HOOKS
from sapiens2.visualization.dense_maps import albedo_to_bgr
from sapiens2.visualization.dense_visualization_hook import DenseVisualizationHook


@HOOKS.register_module()
class AlbedoVisualizationHook(DenseVisualizationHook):
    """[image | GT albedo | predicted albedo] on a grey background."""

    def render(self, dense: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        return albedo_to_bgr(dense.transpose(1, 2, 0), mask)
