"""Masked dense losses shared by the normal, pointmap and albedo heads.

Conventions: ``pred`` and ``target`` are (B, C, H, W), ``mask`` is (B, 1, H, W) bool. Sums run over valid pixels
of the whole batch and are divided by the number of valid *pixels* |V| (so channel errors add up, as in the
original). Non-finite values become 0, and an empty mask gives a loss of 0.
"""
from typing import Tuple

import torch
import torch.nn.functional as F
from torch import nn

from sapiens2.registry import MODELS


def finite_or_zero(value: torch.Tensor) -> torch.Tensor:
    """Replace NaN and +-Inf by 0."""
    return torch.nan_to_num(value, nan=0.0, posinf=0.0, neginf=0.0)


def masked_channel_sum_mean(error: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """sum over valid pixels and channels of ``error`` (B, C, H, W), divided by the valid pixel count."""
    count = mask.sum()
    if count == 0:
        return error.sum() * 0.0
    return finite_or_zero((error * mask).sum() / count)


def masked_l1(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """sum_V sum_c |pred - target| / |V|."""
    return masked_channel_sum_mean((pred - target).abs(), mask)


def forward_differences(x: torch.Tensor, mask: torch.Tensor) -> Tuple[torch.Tensor, ...]:
    """Forward differences of ``x`` along x and y with the masks of pairs whose both pixels are valid.

    Returns:
        (dx, mask_x, dy, mask_y) with shapes (B, C, H, W-1), (B, 1, H, W-1), (B, C, H-1, W), (B, 1, H-1, W).
    """
    dx = x[..., :, 1:] - x[..., :, :-1]
    dy = x[..., 1:, :] - x[..., :-1, :]
    mask_x = mask[..., :, 1:] & mask[..., :, :-1]
    mask_y = mask[..., 1:, :] & mask[..., :-1, :]
    return dx, mask_x, dy, mask_y


def upsample_pair(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
                  scale_factor: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Bilinearly upsample ``pred`` and ``target`` and nearest-upsample ``mask`` by ``scale_factor``."""
    pred = F.interpolate(pred, scale_factor=scale_factor, mode='bilinear', align_corners=False)
    target = F.interpolate(target, scale_factor=scale_factor, mode='bilinear', align_corners=False)
    mask = F.interpolate(mask.float(), scale_factor=scale_factor, mode='nearest') > 0.5
    return pred, target, mask


class MaskedLoss(nn.Module):
    """Base of the masked losses: holds ``loss_weight`` and ``loss_name`` (the key in the loss dict)."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss') -> None:
        super().__init__()
        self.loss_weight = loss_weight
        self._loss_name = loss_name

    @property
    def loss_name(self) -> str:
        return self._loss_name


@MODELS.register_module()
class MaskedL1Loss(MaskedLoss):
    """``loss_weight * min(sum_V sum_c |p - g| / |V|, clamp_max)`` (the official ``loss_l1``).

    Args:
        scale_factor: If not 1, compare the maps after bilinear upsampling by this factor (the pointmap
            ``MultiscaleL1Loss``; the mask is nearest-upsampled).
        clamp_max: Upper clamp of the unweighted value (pointmap: 4.0); ``None`` disables it.
    """

    def __init__(self,
                 loss_weight: float = 1.0,
                 loss_name: str = 'loss_l1',
                 scale_factor: float = 1.0,
                 clamp_max: float = None) -> None:
        super().__init__(loss_weight, loss_name)
        self.scale_factor = scale_factor
        self.clamp_max = clamp_max

    def forward(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, **_context) -> torch.Tensor:
        if self.scale_factor != 1:
            pred, target, mask = upsample_pair(pred, target, mask, self.scale_factor)
        loss = masked_l1(pred, target, mask)
        if self.clamp_max is not None:
            loss = loss.clamp(max=self.clamp_max)
        return self.loss_weight * loss


@MODELS.register_module()
class MaskedGradientMSELoss(MaskedLoss):
    """Squared error of forward differences over valid neighbour pairs.

    The original calls this "GradL1" although it squares the error; this is named for what it computes.
    Per direction d in {x, y}: E_d = sum over valid pairs (and channels) of (dp - dg)^2 / |V_d|.

    Args:
        channel_reduction: ``'sum'`` adds the channel errors (normal); ``'mean'`` averages them (albedo).
        direction_reduction: ``'sum'``: E_x + E_y (normal); ``'mean'``: (E_x + E_y) / 2 (albedo).
    """

    def __init__(self,
                 loss_weight: float = 1.0,
                 loss_name: str = 'loss_grad',
                 channel_reduction: str = 'sum',
                 direction_reduction: str = 'sum') -> None:
        super().__init__(loss_weight, loss_name)
        for name, value in (('channel_reduction', channel_reduction), ('direction_reduction', direction_reduction)):
            if value not in ('sum', 'mean'):
                raise ValueError(f"{name} must be 'sum' or 'mean', got {value!r}.")
        self.channel_reduction = channel_reduction
        self.direction_reduction = direction_reduction

    def forward(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, **_context) -> torch.Tensor:
        dpx, mask_x, dpy, mask_y = forward_differences(pred, mask)
        dgx, _, dgy, _ = forward_differences(target, mask)
        loss = masked_channel_sum_mean((dpx - dgx)**2, mask_x) + masked_channel_sum_mean((dpy - dgy)**2, mask_y)
        if self.channel_reduction == 'mean':
            loss = loss / pred.shape[1]
        if self.direction_reduction == 'mean':
            loss = loss / 2
        return self.loss_weight * loss
