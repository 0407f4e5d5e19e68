"""Masked cosine loss between predicted and ground-truth normals (the official ``loss_cosine_sim``)."""
import torch
import torch.nn.functional as F

from sapiens2.models.losses.masked import MaskedLoss, masked_channel_sum_mean
from sapiens2.registry import MODELS


@MODELS.register_module()
class NormalCosineSimilarityLoss(MaskedLoss):
    """``loss_weight * sum_V (1 - cos(p, g)) / |V|`` with both maps L2-normalised (eps 1e-6)."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_cosine_sim') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, **_context) -> torch.Tensor:
        cosine = (F.normalize(pred, dim=1, eps=1e-6) * F.normalize(target, dim=1, eps=1e-6)).sum(1, keepdim=True)
        return self.loss_weight * masked_channel_sum_mean(1 - cosine, mask)
