"""Non-overlapping patch embedding."""
from typing import Tuple

import torch
from torch import nn


class PatchEmbed(nn.Module):
    """Conv2d(in_channels -> embed_dims, kernel = stride = patch_size); key prefix ``projection``.

    Returns tokens (B, Hp*Wp, C) in row-major order and the grid size (Hp, Wp).
    """

    def __init__(self, in_channels: int, embed_dims: int, patch_size: int, **conv_cfg) -> None:
        super().__init__()
        self.in_channels = in_channels
        conv_args = dict(kernel_size=patch_size, stride=patch_size, padding=0, bias=True)
        conv_args.update(conv_cfg)
        self.projection = nn.Conv2d(in_channels, embed_dims, **conv_args)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, Tuple[int, int]]:
        if x.dim() != 4 or x.shape[1] != self.in_channels:
            raise ValueError(f'Sapiens2 expects images of shape (B, {self.in_channels}, H, W), got '
                             f'{tuple(x.shape)}; set in_channels to match your input.')
        x = self.projection(x)  # (B, C, Hp, Wp)
        grid = (x.shape[2], x.shape[3])
        return x.flatten(2).transpose(1, 2), grid
