"""Validation pictures of predicted normals."""
from typing import Optional

import numpy as np

from sapiens2.registry import HOOKS
from sapiens2.visualization.dense_maps import normals_to_bgr
from sapiens2.visualization.dense_visualization_hook import DenseVisualizationHook


@HOOKS.register_module()
class NormalVisualizationHook(DenseVisualizationHook):
    """[image | GT normals | predicted normals] as (n + 1) / 2 colours; background black."""

    def render(self, dense: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        return normals_to_bgr(dense.transpose(1, 2, 0), mask)
