"""Per-sample soft Dice loss over the foreground classes present in the ground truth (official ``loss_dice``)."""
from typing import Optional

import torch
import torch.nn.functional as F
from mmseg.registry import MODELS

from .seg_loss import SegLoss


@MODELS.register_module()
class Sapiens2DiceLoss(SegLoss):
    """Soft Dice loss of the official Sapiens2 segmentation models.

    Softmax probabilities ``p`` and the one-hot target ``g`` are zeroed at ignored pixels. Per sample ``b`` and
    class ``c`` (background excluded when ``exclude_background``):
    ``dice[b, c] = (2 * sum(p * g) + smooth) / (sum(p^2) + sum(g^2) + smooth)``.
    The sample loss is ``1 - mean(dice[b, c])`` over the classes present in that sample's ground truth, or 0 when
    no such class (or no valid pixel) exists; the batch loss is the mean of the sample losses, zeros included.
    This differs from mmseg's ``DiceLoss`` (which averages over all classes and the whole batch).

    Args:
        smooth: Added to numerator and denominator.
        exclude_background: Leave class 0 out of the average.
        loss_weight: Multiplier of the loss.
        loss_name: Key of the loss in the log (must start with ``loss_``).
    """

    def __init__(self,
                 smooth: float = 1e-3,
                 exclude_background: bool = True,
                 loss_weight: float = 1.0,
                 loss_name: str = 'loss_dice') -> None:
        super().__init__(loss_weight, loss_name)
        self.smooth = smooth
        self.exclude_background = exclude_background

    def forward(self,
                pred: torch.Tensor,
                target: torch.Tensor,
                weight: Optional[torch.Tensor] = None,
                ignore_index: int = 255,
                **kwargs) -> torch.Tensor:
        """Loss of logits ``pred`` (B, K, H, W) against labels ``target`` (B, H, W)."""
        if weight is not None:
            raise ValueError('Sapiens2DiceLoss does not support per-pixel weights; remove the sampler')
        num_classes = pred.shape[1]
        valid = (target != ignore_index).unsqueeze(1).float()
        prob = pred.float().softmax(dim=1) * valid
        onehot = F.one_hot(target.where(target != ignore_index, 0), num_classes).permute(0, 3, 1, 2) * valid
        if self.exclude_background:
            prob, onehot = prob[:, 1:], onehot[:, 1:]
        intersection = (prob * onehot).flatten(2).sum(-1)
        denominator = prob.square().flatten(2).sum(-1) + onehot.flatten(2).sum(-1)
        dice = (2 * intersection + self.smooth) / (denominator + self.smooth)
        present = onehot.flatten(2).sum(-1) > 0
        num_present = present.sum(dim=1)
        mean_dice = (dice * present).sum(dim=1) / num_present.clamp_min(1)
        sample_loss = torch.where(num_present > 0, 1 - mean_dice, torch.zeros_like(mean_dice))
        return self.loss_weight * sample_loss.mean()
