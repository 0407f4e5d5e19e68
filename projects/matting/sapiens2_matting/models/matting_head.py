"""Matting head: the dense trunk + a 1x1 conv to 4 channels (the released ``facebook/sapiens2-matting-1b`` head)."""
from typing import Dict, Optional, Sequence

import torch
from torch import nn

from sapiens2.models.heads.dense_trunk_head import DenseTrunkHead
from sapiens2.registry import MODELS


@MODELS.register_module()
class MattingHead(DenseTrunkHead):
    """Predicts the pre-multiplied RGB foreground and the alpha matte, (B, 4, 16h, 16w) logits.

    ``forward`` returns the logits of ``conv_matting``; the sigmoid turns them into the foreground ``[:, :3]`` and
    alpha ``[:, 3:]`` in [0, 1] (see :mod:`sapiens2_matting.matting_channels`). The losses see the sigmoid outputs,
    and ``pred_dense`` holds them at the original image size.

    Keys: ``input_conv.0``, ``upsample_blocks.{i}.0``, ``conv_layers.{0,3,6}``, ``conv_matting``. The default widths
    are those of the 0.4b-1b normal heads; the released checkpoint's widths are an assumption (its ``config.json``,
    when available, wins). Args are those of :class:`DenseTrunkHead`.
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
        self.conv_matting = nn.Conv2d(self.trunk_channels, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_matting(self.forward_trunk(x))

    def loss_by_feat(self, outputs: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        target, mask = self.stack_targets(data_samples)
        return self.apply_losses(outputs.sigmoid(), target.to(outputs), mask.to(outputs.device))

    def postprocess(self, outputs: torch.Tensor) -> Dict[str, torch.Tensor]:
        return dict(map=outputs.sigmoid())
