"""Validation pictures of predicted alpha mattes."""
from typing import Optional

import numpy as np
import torch

from sapiens2.registry import HOOKS
from sapiens2.visualization.dense_visualization_hook import DenseVisualizationHook

from ..matting_channels import alpha_channel
from ..matting_pictures import alpha_to_bgr


@HOOKS.register_module()
class MattingVisualizationHook(DenseVisualizationHook):
    """[image | GT alpha | predicted alpha] in grey."""

    def render(self, dense: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        return alpha_to_bgr(alpha_channel(torch.from_numpy(dense))[0].numpy())
