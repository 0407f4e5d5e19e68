"""The 4K window tokenizer: summarises each w x w window of patch tokens into one token."""
from typing import Tuple

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from .block import TransformerBlock


class WindowTokenizer(nn.Module):
    """Runs small transformer blocks inside non-overlapping windows and keeps each window's [CLS] output.

    Blocks use full MHSA, no QK-norm, no LayerScale and no RoPE; a learned local position embedding
    (``local_pos_embed``, index 0 for the window [CLS] ``w_cls``) is added. Windows are processed in chunks of at
    most ``chunk_size`` to bound memory; in training each chunk is activation-checkpointed.
    """

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 feedforward_channels: int,
                 num_layers: int,
                 window_size: int = 4,
                 qkv_bias: bool = True,
                 chunk_size: int = 1024) -> None:
        super().__init__()
        self.window_size = window_size
        self.chunk_size = chunk_size
        self.local_pos_embed = nn.Parameter(torch.zeros(1, window_size * window_size + 1, embed_dims))
        self.w_cls = nn.Parameter(torch.zeros(1, 1, embed_dims))
        self.blocks = nn.ModuleList([
            TransformerBlock(embed_dims, num_heads, feedforward_channels, qkv_bias=qkv_bias, use_qk_norm=False)
            for _ in range(num_layers)
        ])

    def _run_blocks(self, windows: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            windows = block(windows)
        return windows[:, 0]

    def forward(self, x: torch.Tensor, grid: Tuple[int, int]) -> Tuple[torch.Tensor, Tuple[int, int]]:
        """x (B, Hp*Wp, C) on grid (Hp, Wp) -> (B, Hp/w * Wp/w, C) on grid (Hp/w, Wp/w)."""
        batch, _, channels = x.shape
        w = self.window_size
        rows, cols = grid[0] // w, grid[1] // w
        windows = x.view(batch, rows, w, cols, w, channels).permute(0, 1, 3, 2, 4, 5)
        windows = windows.reshape(batch * rows * cols, w * w, channels)
        windows = torch.cat((self.w_cls.expand(windows.shape[0], -1, -1), windows), dim=1) + self.local_pos_embed
        use_cp = self.training and torch.is_grad_enabled()
        outputs = []
        for chunk in windows.split(self.chunk_size):
            out = checkpoint(self._run_blocks, chunk, use_reentrant=False) if use_cp else self._run_blocks(chunk)
            outputs.append(out)
        return torch.cat(outputs).view(batch, rows * cols, channels), (rows, cols)
