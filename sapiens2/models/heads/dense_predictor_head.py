"""A dense trunk with one 1x1 output conv, the layout of the official normal, albedo and matting heads."""
from typing import Dict, Optional, Sequence

import torch
from torch import nn

from .dense_trunk_head import DenseTrunkHead


class DensePredictorHead(DenseTrunkHead):
    """:class:`DenseTrunkHead` + a 1x1 conv to ``num_outputs`` channels under the attribute ``predictor`` (its
    state-dict key, e.g. ``conv_normal``); the losses compare its raw output with the packed targets.

    A subclass sets ``predictor``, ``num_outputs`` and, for another trunk norm than ``'IN'``, ``norm``. The default
    widths are those of the official 0.4b-1b heads; the args are those of :class:`DenseTrunkHead`.
    """
    predictor: str
    num_outputs: int
    norm: str = 'IN'

    def __init__(self,
                 in_channels: int,
                 upsample_channels: Sequence[int] = (768, 512, 256, 128),
                 conv_out_channels: Sequence[int] = (64, 32, 16),
                 conv_kernel_sizes: Optional[Sequence[int]] = None,
                 loss_decode=None,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(in_channels, upsample_channels, conv_out_channels, conv_kernel_sizes, self.norm, loss_decode,
                         init_cfg)
        self.add_module(self.predictor, nn.Conv2d(self.trunk_channels, self.num_outputs, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, self.predictor)(self.forward_trunk(x))

    def loss_by_feat(self, outputs: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        target, mask = self.stack_targets(data_samples)
        return self.apply_losses(outputs, target, mask)
