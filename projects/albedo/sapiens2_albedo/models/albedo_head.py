"""Albedo head: the dense trunk with RMSNorm2d + a 1x1 conv to RGB (the official ``AlbedoHead``)."""
from typing import Dict, Optional, Sequence

import torch
from torch import nn

from sapiens2.models.heads.dense_trunk_head import DenseTrunkHead
from sapiens2.registry import MODELS


@MODELS.register_module()
class AlbedoHead(DenseTrunkHead):
    """Predicts RGB albedo (B, 3, 16h, 16w), no output activation; :meth:`postprocess` clamps it to [0, 1].

    Keys add the RMSNorm2d weights ``input_conv.1.norm``, ``upsample_blocks.{i}.2.norm`` and
    ``conv_layers.{1,4,7}.norm`` to the normal-head layout. Args are those of :class:`DenseTrunkHead`.
    """

    def __init__(self,
                 in_channels: int,
                 upsample_channels: Sequence[int] = (768, 512, 256, 128),
                 conv_out_channels: Sequence[int] = (64, 32, 16),
                 conv_kernel_sizes: Optional[Sequence[int]] = None,
                 loss_decode=None,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(in_channels, upsample_channels, conv_out_channels, conv_kernel_sizes, 'RMSNorm2d',
                         loss_decode, init_cfg)
        self.conv_albedo = nn.Conv2d(self.trunk_channels, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_albedo(self.forward_trunk(x))

    def loss_by_feat(self, outputs: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        target, mask = self.stack_targets(data_samples)
        return self.apply_losses(outputs, target, mask)

    def postprocess(self, outputs: torch.Tensor) -> Dict[str, torch.Tensor]:
        return dict(map=outputs.clamp(0.0, 1.0))
