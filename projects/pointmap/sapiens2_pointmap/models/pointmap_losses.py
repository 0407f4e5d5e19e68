"""Pointmap losses (official recipe). All take ``(pred, target, mask, **context)`` with the context the head passes:
``mean_depth`` (B, 1, 1, 1) mean canonical GT depth, ``gt_scale`` / ``pred_scale`` (B, 1) focal scale, and
``cam_K`` (B, 3, 3) intrinsics of the network input before canonicalisation.
"""
import torch
import torch.nn.functional as F

from sapiens2.models.losses.masked import MaskedL1Loss, MaskedLoss, masked_channel_sum_mean, masked_l1
from sapiens2.registry import MODELS


@MODELS.register_module()
class PointmapL1Loss(MaskedL1Loss):
    """:class:`MaskedL1Loss` on pred / m and gt / m, m = per-sample mean GT depth; clamped to <= 4 by default.

    With ``scale_factor=2`` it is the original's ``MultiscaleL1Loss``.
    """

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_l1', scale_factor: float = 1.0,
                 clamp_max: float = 4.0) -> None:
        super().__init__(loss_weight, loss_name, scale_factor, clamp_max)

    def forward(self, pred, target, mask, mean_depth: torch.Tensor = None, **_context) -> torch.Tensor:
        return super().forward(pred / mean_depth, target / mean_depth, mask)


@MODELS.register_module()
class PointmapShiftInvariantL1Loss(MaskedLoss):
    """L1 after removing each map's masked centroid (per sample and channel), on depth-normalised maps; clamped."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_shift_invariant',
                 clamp_max: float = 4.0) -> None:
        super().__init__(loss_weight, loss_name)
        self.clamp_max = clamp_max

    @staticmethod
    def _centred(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        count = mask.sum((2, 3), keepdim=True).clamp(min=1)
        return x - (x * mask).sum((2, 3), keepdim=True) / count

    def forward(self, pred, target, mask, mean_depth: torch.Tensor = None, **_context) -> torch.Tensor:
        pred, target = pred / mean_depth, target / mean_depth
        loss = masked_l1(self._centred(pred, mask), self._centred(target, mask), mask)
        return self.loss_weight * loss.clamp(max=self.clamp_max)


@MODELS.register_module()
class SiLogLoss(MaskedLoss):
    """Scale-invariant log loss on the Z channel: per sample sqrt(mean d^2 - lambda (mean d)^2),
    d = log(max(gt, 1e-4)) - log(max(pred, 1e-4)) over valid finite pixels; averaged over the batch."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_silog', variance_focus: float = 0.5,
                 channel: int = 2) -> None:
        super().__init__(loss_weight, loss_name)
        self.variance_focus = variance_focus
        self.channel = channel

    def forward(self, pred, target, mask, **_context) -> torch.Tensor:
        pred_z, gt_z = pred[:, self.channel], target[:, self.channel]
        valid = (mask[:, 0] & torch.isfinite(gt_z) & torch.isfinite(pred_z)).float()
        diff = torch.log(gt_z.clamp(min=1e-4).nan_to_num(1e-4)) - torch.log(pred_z.clamp(min=1e-4).nan_to_num(1e-4))
        count = valid.sum((1, 2)).clamp(min=1)
        mean = (diff * valid).sum((1, 2)) / count
        mean_sq = (diff**2 * valid).sum((1, 2)) / count
        per_sample = torch.sqrt((mean_sq - self.variance_focus * mean**2).clamp(min=1e-12))
        per_sample = per_sample * (valid.sum((1, 2)) > 0)
        return self.loss_weight * per_sample.mean()


def pixel_grid(height: int, width: int, like: torch.Tensor):
    """Integer pixel coordinates u (column) and v (row), each (1, H, W)."""
    v, u = torch.meshgrid(torch.arange(height, device=like.device, dtype=like.dtype),
                          torch.arange(width, device=like.device, dtype=like.dtype), indexing='ij')
    return u[None], v[None]


@MODELS.register_module()
class PointmapIntrinsicsConsistencyLoss(MaskedLoss):
    """sum_V (|X - (u - cx) Z / fx| + |Y - (v - cy) Z / fy|) / |V| with the input intrinsics ``cam_K``.

    The ratio X / Z does not depend on the isotropic canonical scale, so the input K applies to the canonical map.
    """

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_K_consistency') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred, target, mask, cam_K: torch.Tensor = None, **_context) -> torch.Tensor:
        u, v = pixel_grid(*pred.shape[-2:], pred)
        fx, fy = cam_K[:, 0, 0, None, None], cam_K[:, 1, 1, None, None]
        cx, cy = cam_K[:, 0, 2, None, None], cam_K[:, 1, 2, None, None]
        x, y, z = pred[:, 0], pred[:, 1], pred[:, 2]
        error = (x - (u - cx) * z / fx).abs() + (y - (v - cy) * z / fy).abs()
        return self.loss_weight * masked_channel_sum_mean(error[:, None], mask)


def normals_from_points(points: torch.Tensor, step_gain: float = 100.0) -> torch.Tensor:
    """Unnormalised normals (B, 3, H, W): cross product of the right and down neighbour differences
    (reflect-padded, each multiplied by ``step_gain``)."""
    padded = F.pad(points, (0, 1, 0, 1), mode='reflect')
    dx = (padded[..., :-1, 1:] - padded[..., :-1, :-1]) * step_gain
    dy = (padded[..., 1:, :-1] - padded[..., :-1, :-1]) * step_gain
    return torch.cross(dx, dy, dim=1)


@MODELS.register_module()
class PointmapNormalLoss(MaskedLoss):
    """Surface normals of pred and GT in metric units (both divided by the GT scale), compared per valid pixel with
    (1 - cos) + mean_c |n_p - n_g|; valid = mask and GT normal magnitude > 1e-6."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_normal') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred, target, mask, gt_scale: torch.Tensor = None, **_context) -> torch.Tensor:
        scale = gt_scale.reshape(-1, 1, 1, 1)
        normal_pred = normals_from_points(pred / scale)
        normal_gt = normals_from_points(target / scale)
        valid = mask & (normal_gt.norm(dim=1, keepdim=True) > 1e-6)
        unit_pred = F.normalize(normal_pred, dim=1, eps=1e-6)
        unit_gt = F.normalize(normal_gt, dim=1, eps=1e-6)
        cosine = (unit_pred * unit_gt).sum(1, keepdim=True)
        error = (1 - cosine) + (unit_pred - unit_gt).abs().mean(1, keepdim=True)
        return self.loss_weight * masked_channel_sum_mean(error, valid)


@MODELS.register_module()
class PointmapScaleL1Loss(MaskedLoss):
    """mean |pred_scale - gt_scale| over the batch."""

    def __init__(self, loss_weight: float = 1.0, loss_name: str = 'loss_scale_l1') -> None:
        super().__init__(loss_weight, loss_name)

    def forward(self, pred, target, mask, pred_scale: torch.Tensor = None, gt_scale: torch.Tensor = None,
                **_context) -> torch.Tensor:
        return self.loss_weight * (pred_scale.reshape(-1) - gt_scale.reshape(-1)).abs().mean()
