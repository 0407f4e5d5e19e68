"""2D rotary position embedding (axial, DINOv3-style) with the Sapiens2 dtype flow.

The tables are computed in ``dtype`` (bf16 by default, as in the official release), and q/k are cast to that dtype
for the rotation and back afterwards. Reproducing this flow is required for bit-level compatibility.
"""
import math
from typing import Optional, Tuple

import numpy as np
import torch
from torch import nn

RopeTables = Tuple[torch.Tensor, torch.Tensor]  # (sin, cos), each (HW, d) or (B, K, d)

_DTYPES = {'bf16': torch.bfloat16}


def rope_dtype_from_name(name: str) -> torch.dtype:
    """'bf16' -> torch.bfloat16; any other name means fp32 (official behaviour)."""
    return _DTYPES.get(name, torch.float32)


class RopePositionEmbedding(nn.Module):
    """Produces per-token sin/cos tables for a (H, W) token grid.

    Args:
        embed_dims: model width C.
        num_heads: attention heads h; requires C % (4 h) == 0. The head dim d = C / h gets d/4 periods per axis.
        base: period base; ``period_i = base ** (4 i / d)``. Ignored when min/max periods are given.
        min_period, max_period: log-spaced periods between the two instead of ``base``.
        normalize_coords: 'separate' (each axis by its own length), 'min' or 'max'.
        shift_coords, jitter_coords, rescale_coords: training-only coordinate augmentations (off when None).
        dtype: dtype of the periods buffer and of every table computation.
    """

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 base: Optional[float] = 100.0,
                 min_period: Optional[float] = None,
                 max_period: Optional[float] = None,
                 normalize_coords: str = 'separate',
                 shift_coords: Optional[float] = None,
                 jitter_coords: Optional[float] = None,
                 rescale_coords: Optional[float] = None,
                 dtype: torch.dtype = torch.bfloat16) -> None:
        super().__init__()
        if embed_dims % (4 * num_heads) != 0:
            raise ValueError(f'RoPE needs embed_dims divisible by 4 * num_heads, got {embed_dims} and {num_heads}.')
        if normalize_coords not in ('separate', 'min', 'max'):
            raise ValueError(f"normalize_coords must be 'separate', 'min' or 'max', got {normalize_coords!r}.")
        self.head_dims = embed_dims // num_heads
        self.base = base
        self.min_period = min_period
        self.max_period = max_period
        self.normalize_coords = normalize_coords
        self.shift_coords = shift_coords
        self.jitter_coords = jitter_coords
        self.rescale_coords = rescale_coords
        self.dtype = dtype
        self.register_buffer('periods', self._init_periods(), persistent=True)

    def _init_periods(self) -> torch.Tensor:
        quarter = self.head_dims // 4
        if self.min_period is not None and self.max_period is not None:
            exponents = torch.linspace(0, 1, quarter, dtype=self.dtype)
            ratio = self.max_period / self.min_period
            return (ratio**exponents) * self.min_period
        return self.base**(2 * torch.arange(quarter, dtype=self.dtype) / (self.head_dims // 2))

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.periods.copy_(self._init_periods().to(self.periods.device))

    def grid_coords(self, height: int, width: int, device: torch.device) -> torch.Tensor:
        """Row-major (row, col) coordinates in [-1, 1] for a grid, shape (H*W, 2), in the RoPE dtype."""
        dd = dict(device=device, dtype=self.dtype)
        if self.normalize_coords == 'separate':
            rows = torch.arange(0.5, height, **dd) / height
            cols = torch.arange(0.5, width, **dd) / width
        else:
            norm = max(height, width) if self.normalize_coords == 'max' else min(height, width)
            rows = torch.arange(0.5, height, **dd) / norm
            cols = torch.arange(0.5, width, **dd) / norm
        coords = torch.stack(torch.meshgrid(rows, cols, indexing='ij'), dim=-1).flatten(0, 1)
        coords = 2.0 * coords - 1.0
        if self.training:
            coords = self._augment(coords)
        return coords

    def _augment(self, coords: torch.Tensor) -> torch.Tensor:
        dd = dict(device=coords.device, dtype=coords.dtype)
        if self.shift_coords is not None:
            coords = coords + torch.empty(2, **dd).uniform_(-self.shift_coords, self.shift_coords)[None]
        if self.jitter_coords is not None:
            log_jitter = np.log(self.jitter_coords)
            coords = coords * torch.empty(2, **dd).uniform_(-log_jitter, log_jitter).exp()[None]
        if self.rescale_coords is not None:
            log_rescale = np.log(self.rescale_coords)
            coords = coords * torch.empty(1, **dd).uniform_(-log_rescale, log_rescale).exp()
        return coords

    def forward(self, height: int, width: int, keep_indices: Optional[torch.Tensor] = None) -> RopeTables:
        """sin/cos of shape (H*W, d), or (B, K, d) for the kept tokens when ``keep_indices`` (B, K) is given."""
        coords = self.grid_coords(height, width, self.periods.device)
        angles = 2 * math.pi * coords[:, :, None] / self.periods[None, None, :]  # (HW, 2, d/4)
        angles = angles.flatten(1, 2).tile(2)  # (HW, d): [rows, cols, rows, cols]
        if keep_indices is not None:
            angles = angles[keep_indices]  # (B, K, d)
        return torch.sin(angles), torch.cos(angles)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """[a, b] -> [-b, a] over the last dim (dimension i pairs with i + d/2)."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def apply_rope(x: torch.Tensor, tables: RopeTables) -> torch.Tensor:
    """Rotates the trailing position tokens of x (B, heads, N, d); the leading prefix tokens stay as they are.

    x is cast to the tables' dtype as a whole (prefix included) and back to its own dtype at the end.
    """
    sin, cos = tables
    if sin.dim() == 3:  # per-sample tables (B, K, d) -> broadcast over heads
        sin, cos = sin[:, None], cos[:, None]
    in_dtype = x.dtype
    x = x.to(sin.dtype)
    num_prefix = x.shape[-2] - sin.shape[-2]
    prefix, tokens = x[..., :num_prefix, :], x[..., num_prefix:, :]
    tokens = tokens * cos + rotate_half(tokens) * sin
    return torch.cat((prefix, tokens), dim=-2).to(in_dtype)
