"""Validation pictures of predicted pointmaps."""
from typing import Optional

import numpy as np

from sapiens2.registry import HOOKS
from sapiens2.visualization.dense_maps import depth_to_bgr
from sapiens2.visualization.dense_visualization_hook import DenseVisualizationHook


@HOOKS.register_module()
class PointmapVisualizationHook(DenseVisualizationHook):
    """[image | GT depth | predicted depth]: the canonical Z channel as a turbo map of inverse depth."""

    def render(self, dense: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        depth = dense[2]
        return depth_to_bgr(depth, mask if mask is not None else depth > 0)
