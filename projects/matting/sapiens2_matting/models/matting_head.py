"""Matting head: the dense trunk + a 1x1 conv to 4 channels (the released ``facebook/sapiens2-matting-1b`` head)."""
from typing import Dict, Sequence

import torch

from sapiens2.models.heads import DensePredictorHead
from sapiens2.registry import MODELS


@MODELS.register_module()
class MattingHead(DensePredictorHead):
    """Predicts the pre-multiplied RGB foreground and the alpha matte, (B, 4, 16h, 16w) logits.

    ``forward`` returns the logits of ``conv_matting``; the sigmoid turns them into the foreground ``[:, :3]`` and
    alpha ``[:, 3:]`` in [0, 1] (see :mod:`sapiens2_matting.matting_channels`). The losses see the sigmoid outputs,
    and ``pred_dense`` holds them at the original image size.

    Keys: ``input_conv.0``, ``upsample_blocks.{i}.0``, ``conv_layers.{0,3,6}``, ``conv_matting``. The default widths
    are those of the 0.4b-1b normal heads; the released checkpoint's widths are an assumption (its ``config.json``,
    when available, wins). Args are those of :class:`DensePredictorHead`.
    """
    predictor, num_outputs = 'conv_matting', 4

    def loss_by_feat(self, outputs: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        target, mask = self.stack_targets(data_samples)
        return self.apply_losses(outputs.sigmoid(), target.to(outputs), mask.to(outputs.device))

    def postprocess(self, outputs: torch.Tensor) -> Dict[str, torch.Tensor]:
        return dict(map=outputs.sigmoid())
