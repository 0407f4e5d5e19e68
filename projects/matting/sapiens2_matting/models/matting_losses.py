"""Matting losses. Each takes the sigmoid prediction (B, 4, H, W), the training target (B, 11, H, W) and the validity
mask (B, 1, H, W) (the letterbox padding is invalid); channel layouts in :mod:`sapiens2_matting.matting_channels`.

Conventions: means run over the valid pixels of the whole batch (an empty region gives 0); RGB errors are averaged
over the three channels; a foreground or background the dataset does not have (NaN) leaves its pixels out.
"""
from typing import List

import torch
import torch.nn.functional as F

from sapiens2.models.losses.masked import MaskedLoss, forward_differences, masked_channel_sum_mean
from sapiens2.registry import MODELS

from ..matting_channels import split_prediction, split_target, unknown_region

REGIONS = ('all', 'unknown')


def _region_mask(target: torch.Tensor, mask: torch.Tensor, region: str) -> torch.Tensor:
    if region == 'unknown':
        return mask & unknown_region(split_target(target).trimap)
    return mask


def _check_region(region: str) -> str:
    if region not in REGIONS:
        raise ValueError(f'region must be one of {REGIONS}, got {region!r}')
    return region


def _known(x: torch.Tensor, mask: torch.Tensor):
    """``x`` with NaN set to 0, and ``mask`` restricted to the pixels where every channel of ``x`` is finite."""
    finite = torch.isfinite(x).all(dim=1, keepdim=True)
    return torch.where(finite, x, torch.zeros_like(x)), mask & finite


@MODELS.register_module()
class MattingAlphaL1Loss(MaskedLoss):
    """``loss_weight * mean |alpha_p - alpha_g|`` over the valid pixels (``region='all'``) or the trimap's unknown
    pixels (``region='unknown'``)."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_alpha_l1', region: str = 'all') -> None:
        super().__init__(loss_weight, loss_name)
        self.region = _check_region(region)

    def forward(self, pred, target, mask, **_context) -> torch.Tensor:
        alpha_p, alpha_g = split_prediction(pred).alpha, split_target(target).alpha
        region = _region_mask(target, mask, self.region)
        return self.loss_weight * masked_channel_sum_mean((alpha_p - alpha_g).abs(), region)


@MODELS.register_module()
class MattingAlphaGradientLoss(MaskedLoss):
    """L1 between the forward differences of predicted and ground-truth alpha:
    ``loss_weight * (mean_x |d_x alpha_p - d_x alpha_g| + mean_y |d_y alpha_p - d_y alpha_g|)`` over neighbour pairs
    whose two pixels are in the region."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_alpha_grad', region: str = 'all') -> None:
        super().__init__(loss_weight, loss_name)
        self.region = _check_region(region)

    def forward(self, pred, target, mask, **_context) -> torch.Tensor:
        region = _region_mask(target, mask, self.region)
        dpx, mask_x, dpy, mask_y = forward_differences(split_prediction(pred).alpha, region)
        dgx, _, dgy, _ = forward_differences(split_target(target).alpha, region)
        loss = masked_channel_sum_mean((dpx - dgx).abs(), mask_x) + masked_channel_sum_mean((dpy - dgy).abs(), mask_y)
        return self.loss_weight * loss


def _gaussian_kernel(device, dtype) -> torch.Tensor:
    taps = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0], device=device, dtype=dtype) / 16
    return taps[:, None] * taps[None, :]


def _blur(x: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """5x5 blur of every channel, reflect-padded (maps of at least 3 x 3)."""
    padded = F.pad(x, (2, 2, 2, 2), mode='reflect')
    return F.conv2d(padded, kernel[None, None].expand(x.shape[1], 1, 5, 5), groups=x.shape[1])


def laplacian_pyramid(x: torch.Tensor, levels: int) -> List[torch.Tensor]:
    """Up to ``levels`` band-pass levels of ``x`` (B, C, H, W), finest first: level i = G_i - up(down(G_i)), with
    G_0 = x, down = 5x5 binomial blur then every other pixel, up = zero insertion then the blur x 4 (reflect
    padding, so constant maps have empty bands). It stops early once G_i is smaller than 3 x 3."""
    kernel = _gaussian_kernel(x.device, x.dtype)
    bands, current = [], x
    for _ in range(levels):
        if min(current.shape[-2:]) < 3:
            break
        down = _blur(current, kernel)[..., ::2, ::2]
        up = torch.zeros(*down.shape[:2], down.shape[-2] * 2, down.shape[-1] * 2, device=x.device, dtype=x.dtype)
        up[..., ::2, ::2] = down * 4
        up = _blur(up, kernel)[..., :current.shape[-2], :current.shape[-1]]
        bands.append(current - up)
        current = down
    return bands


@MODELS.register_module()
class MattingLaplacianLoss(MaskedLoss):
    """Laplacian-pyramid L1 of alpha: ``loss_weight * sum_i 2^i mean_{V_i} |L_i(alpha_p) - L_i(alpha_g)|`` over
    ``levels`` band-pass levels (finest i = 0); both mattes are zeroed outside the mask first and V_i is the mask
    subsampled to level i. A constant offset is invisible to it (pair it with an L1 term)."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_alpha_laplacian', levels: int = 5) -> None:
        super().__init__(loss_weight, loss_name)
        if levels < 1:
            raise ValueError(f'levels must be >= 1, got {levels}')
        self.levels = levels

    def forward(self, pred, target, mask, **_context) -> torch.Tensor:
        valid = mask.to(pred.dtype)
        bands_p = laplacian_pyramid(split_prediction(pred).alpha * valid, self.levels)
        bands_g = laplacian_pyramid(split_target(target).alpha * valid, self.levels)
        loss = pred.new_zeros(())
        level_mask = mask
        for i, (band_p, band_g) in enumerate(zip(bands_p, bands_g)):
            loss = loss + 2**i * masked_channel_sum_mean((band_p - band_g).abs(), level_mask)
            level_mask = level_mask[..., ::2, ::2]
        return self.loss_weight * loss


@MODELS.register_module()
class MattingCompositionLoss(MaskedLoss):
    """The predicted layer composited over the known background against the image:
    ``loss_weight * mean_V mean_c |F_p + (1 - alpha_p) B - I|`` (F pre-multiplied), over valid pixels whose
    background is known."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_composition') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred, target, mask, **_context) -> torch.Tensor:
        fg_p, alpha_p = split_prediction(pred)
        gt = split_target(target)
        if gt.background is None:
            raise ValueError('MattingCompositionLoss needs the training target with background and image '
                             '(FormatMattingTarget(with_composition=True))')
        background, valid = _known(gt.background, mask)
        image, valid = _known(gt.image, valid)
        composite = fg_p + (1 - alpha_p) * background
        return self.loss_weight * masked_channel_sum_mean((composite - image).abs(), valid) / 3


@MODELS.register_module()
class MattingForegroundL1Loss(MaskedLoss):
    """``loss_weight * mean mean_c |F_p - F_g|`` of the pre-multiplied foreground over valid pixels with ground-truth
    alpha > 0 whose foreground is known."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_foreground_l1') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred, target, mask, **_context) -> torch.Tensor:
        gt = split_target(target)
        foreground, valid = _known(gt.foreground, mask & (gt.alpha > 0))
        error = (split_prediction(pred).foreground - foreground).abs()
        return self.loss_weight * masked_channel_sum_mean(error, valid) / 3
