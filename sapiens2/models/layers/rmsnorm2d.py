"""RMSNorm over the channels of a (B, C, H, W) feature map."""
import torch
from torch import nn

from .rmsnorm import RMSNorm


class RMSNorm2d(nn.Module):
    """``nn.RMSNorm`` applied over channels at every pixel (the norm of the official ``AlbedoHead``).

    The norm lives in ``self.norm`` so its learnable scale has the official key ``<prefix>.norm.weight``.

    Args:
        num_channels: Number of channels C.
        eps: Value added to the mean square for numerical stability.
    """

    def __init__(self, num_channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.norm = RMSNorm(num_channels, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
