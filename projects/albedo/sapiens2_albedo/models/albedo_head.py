"""Albedo head: the dense trunk with RMSNorm2d + a 1x1 conv to RGB (the official ``AlbedoHead``)."""
from typing import Dict

import torch

from sapiens2.models.heads import DensePredictorHead
from sapiens2.registry import MODELS


@MODELS.register_module()
class AlbedoHead(DensePredictorHead):
    """Predicts RGB albedo (B, 3, 16h, 16w), no output activation; :meth:`postprocess` clamps it to [0, 1].

    Keys add the RMSNorm2d weights ``input_conv.1.norm``, ``upsample_blocks.{i}.2.norm`` and
    ``conv_layers.{1,4,7}.norm`` to the normal-head layout. Args are those of :class:`DensePredictorHead`.
    """
    predictor, num_outputs, norm = 'conv_albedo', 3, 'RMSNorm2d'

    def postprocess(self, outputs: torch.Tensor) -> Dict[str, torch.Tensor]:
        return dict(map=outputs.clamp(0.0, 1.0))
