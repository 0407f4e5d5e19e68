"""2D rotary position embedding (axial, DINOv3-style) with the Sapiens2 dtype flow.

The tables are computed in ``dtype`` (bf16 by default, as in the official release), and q/k are cast to that dtype
for the rotation and back afterwards. Reproducing this flow is required for bit-level compatibility.
"""
import math
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from torch import nn

RopeTables = Tuple[torch.Tensor, torch.Tensor]  # (sin, cos), each (HW, d) or (B, K, d)
MAX_CACHED_GRIDS = 8

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
        self._token_table_cache: Dict[tuple, RopeTables] = {}

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

    def tokens(self, height: int, width: int, num_prefix: int,
               keep_indices: Optional[torch.Tensor] = None) -> RopeTables:
        """:func:`token_tables` for a sequence of ``num_prefix`` prefix tokens then the (kept) grid positions.

        Without gradients, coordinate augmentation or ``keep_indices``, the tables are cached per grid size, prefix
        length, dtype and device (and rebuilt when ``periods`` changes), so a forward reuses them instead of
        recomputing sin/cos. Under ``torch.compile``/``torch.export`` tracing they are always computed in the graph.
        """
        key = self._cache_key(height, width, num_prefix, keep_indices)
        if key is not None and key in self._token_table_cache:
            return self._token_table_cache[key]
        tables = token_tables(*self(height, width, keep_indices), num_prefix)
        if key is not None:
            if len(self._token_table_cache) >= MAX_CACHED_GRIDS:
                self._token_table_cache.clear()
            self._token_table_cache[key] = tables
        return tables

    def _cache_key(self, height: int, width: int, num_prefix: int,
                   keep_indices: Optional[torch.Tensor]) -> Optional[tuple]:
        augmented = self.training and any(
            v is not None for v in (self.shift_coords, self.jitter_coords, self.rescale_coords))
        if augmented or keep_indices is not None or torch.is_grad_enabled() or torch.compiler.is_compiling():
            return None
        try:
            version = self.periods._version
        except RuntimeError:  # an inference tensor (built under torch.inference_mode) has no version counter
            return None
        return (height, width, num_prefix, self.dtype, self.periods.device, self.periods.data_ptr(), version,
                torch.is_inference_mode_enabled())


def token_tables(sin: torch.Tensor, cos: torch.Tensor, num_prefix: int) -> RopeTables:
    """Tables for every token of a sequence with ``num_prefix`` leading tokens that RoPE leaves unrotated.

    Returns ``(signed_sin, cos)``: the prefix rows are the identity (sin 0, cos 1) and the first half of ``sin`` is
    negated, so that :func:`apply_rope` rotates with one multiply-add over the whole sequence instead of slicing off
    the prefix, rotating halves and concatenating. Shapes (N, d) or (B, N, d) with N = num_prefix + positions.
    """
    half = sin.shape[-1] // 2
    signed_sin = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)
    if num_prefix:
        pad = (*sin.shape[:-2], num_prefix, sin.shape[-1])
        signed_sin = torch.cat((signed_sin.new_zeros(pad), signed_sin), dim=-2)
        cos = torch.cat((cos.new_ones(pad), cos), dim=-2)
    return signed_sin, cos


def swap_halves(x: torch.Tensor) -> torch.Tensor:
    """[a, b] -> [b, a] over the last dim (dimension i pairs with i + d/2)."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((second, first), dim=-1)


def apply_rope(x: torch.Tensor, tables: RopeTables) -> torch.Tensor:
    """Rotates x (B, heads, N, d) by :func:`token_tables` ``(signed_sin, cos)`` covering all N tokens.

    Official dtype flow: x is cast to the tables' dtype as a whole (prefix tokens included), rotated there as
    ``x * cos + rotate_half(x) * sin`` and cast back to its own dtype. ``rotate_half(x) * sin`` is computed as
    ``swap_halves(x) * signed_sin``, which is bitwise the same (negation is exact); prefix rows multiply by 1 and add
    0, which is exact too, so the result is bitwise the official one.
    """
    signed_sin, cos = tables
    if signed_sin.dim() == 3:  # per-sample tables (B, N, d) -> broadcast over heads
        signed_sin, cos = signed_sin[:, None], cos[:, None]
    in_dtype = x.dtype
    x = x.to(cos.dtype)
    return (x * cos + swap_halves(x) * signed_sin).to(in_dtype)
