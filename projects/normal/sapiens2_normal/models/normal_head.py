"""Surface-normal head: the dense trunk + a 1x1 conv to 3 channels (the official ``NormalHead``)."""
from typing import Dict, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sapiens2.models.heads.dense_trunk_head import DenseTrunkHead
from sapiens2.registry import MODELS


@MODELS.register_module()
class NormalHead(DenseTrunkHead):
    """Predicts unnormalised normals (B, 3, 16h, 16w); they are L2-normalised at the network resolution
    (:meth:`postprocess`) and again after the resize to the original image (:meth:`postprocess_sample`).

    Keys: ``input_conv.0``, ``upsample_blocks.{i}.0``, ``conv_layers.{0,3,6}``, ``conv_normal``.
    Args are those of :class:`DenseTrunkHead`.
    """

    def __init__(self,
                 in_channels: int,
                 upsample_channels: Sequence[int] = (768, 512, 256, 128),
                 conv_out_channels: Sequence[int] = (64, 32, 16),
                 conv_kernel_sizes: Optional[Sequence[int]] = None,
                 loss_decode=None,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(in_channels, upsample_channels, conv_out_channels, conv_kernel_sizes, 'IN', loss_decode,
                         init_cfg)
        self.conv_normal = nn.Conv2d(self.trunk_channels, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_normal(self.forward_trunk(x))

    def loss_by_feat(self, outputs: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        target, mask = self.stack_targets(data_samples)
        return self.apply_losses(outputs, target, mask)

    def postprocess(self, outputs: torch.Tensor) -> Dict[str, torch.Tensor]:
        return dict(map=F.normalize(outputs, dim=1, eps=1e-6))

    def postprocess_sample(self, prediction: dict) -> dict:
        dense = prediction['pred_dense']
        dense.data = F.normalize(dense.data, dim=0, eps=1e-6)
        return prediction
