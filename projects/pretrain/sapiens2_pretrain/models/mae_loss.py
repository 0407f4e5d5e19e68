"""Masked-image-modelling loss on per-patch normalised pixels."""
import torch
from torch import Tensor, nn

from sapiens2.registry import MODELS


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """(B, C, H, W) -> (B, H/p * W/p, p * p * C), patches row-major, pixels (row, col, channel) inside a patch."""
    b, c, h, w = images.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f'image size {h}x{w} is not a multiple of the patch size {p}')
    x = images.reshape(b, c, h // p, p, w // p, p)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)


def unpatchify(patches: Tensor, patch_size: int, grid: tuple[int, int], channels: int = 3) -> Tensor:
    """Inverse of :func:`patchify`: (B, rows * cols, p * p * C) -> (B, C, rows * p, cols * p)."""
    b = patches.shape[0]
    rows, cols = grid
    p = patch_size
    x = patches.reshape(b, rows, cols, p, p, channels)
    return x.permute(0, 5, 1, 3, 2, 4).reshape(b, channels, rows * p, cols * p)


@MODELS.register_module()
class MAELoss(nn.Module):
    """MSE between predicted and target patches, averaged over masked patches only.

    With ``norm_pix`` each target patch is normalised as ``(t - mean) / sqrt(var + eps)`` over its own pixels
    (``var`` is the unbiased variance, as in the reference MAE). As every view has the same number of masked
    patches, the mean over all masked patches equals the average of the per-view means.
    """

    def __init__(self, patch_size: int = 16, norm_pix: bool = True, eps: float = 1e-6) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.norm_pix = norm_pix
        self.eps = eps

    def target(self, images: Tensor) -> Tensor:
        """Per-patch (normalised) targets (B, N, p*p*C) of images (B, C, H, W)."""
        target = patchify(images.float(), self.patch_size)
        if self.norm_pix:
            mean = target.mean(dim=-1, keepdim=True)
            var = target.var(dim=-1, keepdim=True)
            target = (target - mean) / torch.sqrt(var + self.eps)
        return target

    def forward(self, pred: Tensor, images: Tensor, mask: Tensor) -> Tensor:
        """Args: pred (B, N, p*p*C), images (B, C, H, W), mask (B, N) bool, True = masked. Returns a scalar."""
        target = self.target(images)
        if pred.shape != target.shape:
            raise ValueError(f'MAE prediction shape {tuple(pred.shape)} != target shape {tuple(target.shape)}')
        per_patch = (pred.float() - target).pow(2).mean(dim=-1)
        mask = mask.to(per_patch.dtype)
        return (per_patch * mask).sum() / mask.sum().clamp(min=1.0)
