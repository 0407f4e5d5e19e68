"""Class-weighted pixel cross-entropy for semantic segmentation (the official seg ``loss_ce``)."""
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from mmseg.registry import MODELS

from .seg_loss import SegLoss

AVERAGES = ('weighted', 'all_pixels')


@MODELS.register_module()
class Sapiens2SegCrossEntropyLoss(SegLoss):
    """Cross-entropy with per-class weights and an ignore index; the per-pixel loss is ``w[y] * CE``.

    Two reductions, chosen by ``average``:

    * ``'weighted'`` (default, torch's ``reduction='mean'`` definition): ``sum(w[y] * CE) / sum(w[y])`` over the
      non-ignored pixels, so the value is a weighted average of per-pixel CE and does not depend on how many pixels
      are ignored or on the overall scale of the class weights.
    * ``'all_pixels'`` (the official Sapiens2 reduction): ``sum(w[y] * CE) / (B * H * W)``, ignored pixels included
      in the count. With the official weights (background 0.1) this is several times smaller than ``'weighted'``
      on background-heavy images, which shifts the CE:Dice balance towards Dice.

    Args:
        class_weight: One weight per class, or None for uniform weights.
        average: ``'weighted'`` or ``'all_pixels'``.
        loss_weight: Multiplier of the loss.
        loss_name: Key of the loss in the log (must start with ``loss_``).
    """

    def __init__(self,
                 class_weight: Optional[Sequence[float]] = None,
                 average: str = 'weighted',
                 loss_weight: float = 1.0,
                 loss_name: str = 'loss_ce') -> None:
        super().__init__(loss_weight, loss_name)
        if average not in AVERAGES:
            raise ValueError(f'average must be one of {AVERAGES}, got {average!r}')
        self.class_weight = None if class_weight is None else [float(w) for w in class_weight]
        self.average = average

    def forward(self,
                pred: torch.Tensor,
                target: torch.Tensor,
                weight: Optional[torch.Tensor] = None,
                ignore_index: int = 255,
                **kwargs) -> torch.Tensor:
        """Loss of logits ``pred`` (B, K, H, W) against labels ``target`` (B, H, W); ``weight`` is per pixel."""
        pred = pred.float()
        class_weight = self._class_weight(pred)
        loss = F.cross_entropy(pred, target, weight=class_weight, reduction='none', ignore_index=ignore_index)
        valid = target != ignore_index
        pixel_weight = valid.float() if class_weight is None else class_weight[target.where(valid, 0)] * valid
        if weight is not None:
            loss = loss * weight
            pixel_weight = pixel_weight * weight
        if self.average == 'all_pixels':
            denominator = torch.tensor(float(target.numel()), device=pred.device)
        else:
            denominator = pixel_weight.sum().clamp_min(torch.finfo(torch.float32).eps)
        return self.loss_weight * loss.sum() / denominator

    def _class_weight(self, pred: torch.Tensor) -> Optional[torch.Tensor]:
        if self.class_weight is None:
            return None
        if len(self.class_weight) != pred.shape[1]:
            raise ValueError(f'class_weight has {len(self.class_weight)} entries but the logits have '
                             f'{pred.shape[1]} classes; give one weight per class')
        return pred.new_tensor(self.class_weight)
