"""Masked L1 between chromaticities (the official albedo ``loss_chroma_l1``)."""
import torch

from sapiens2.models.losses.masked import MaskedLoss, masked_l1
from sapiens2.registry import MODELS


def chromaticity(rgb: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RGB / (R + G + B + eps) per pixel of a (B, 3, H, W) map."""
    return rgb / (rgb.sum(1, keepdim=True) + eps)


@MODELS.register_module()
class AlbedoChromaticityL1Loss(MaskedLoss):
    """``loss_weight * sum_V sum_c |chroma(clamp(p, 0, 1)) - chroma(g)| / |V|``."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_chroma_l1') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, **_context) -> torch.Tensor:
        return self.loss_weight * masked_l1(chromaticity(pred.clamp(0.0, 1.0)), chromaticity(target), mask)
