"""Surface-normal head: the dense trunk + a 1x1 conv to 3 channels (the official ``NormalHead``)."""
from typing import Dict

import torch
import torch.nn.functional as F

from sapiens2.models.heads import DensePredictorHead
from sapiens2.registry import MODELS


@MODELS.register_module()
class NormalHead(DensePredictorHead):
    """Predicts unnormalised normals (B, 3, 16h, 16w); they are L2-normalised at the network resolution
    (:meth:`postprocess`) and again after the resize to the original image (:meth:`postprocess_sample`).

    Keys: ``input_conv.0``, ``upsample_blocks.{i}.0``, ``conv_layers.{0,3,6}``, ``conv_normal``.
    Args are those of :class:`DensePredictorHead`.
    """
    predictor, num_outputs = 'conv_normal', 3

    def postprocess(self, outputs: torch.Tensor) -> Dict[str, torch.Tensor]:
        return dict(map=F.normalize(outputs, dim=1, eps=1e-6))

    def postprocess_sample(self, prediction: dict) -> dict:
        dense = prediction['pred_dense']
        dense.data = F.normalize(dense.data, dim=0, eps=1e-6)
        return prediction
