"""The 4K window tokenizer: summarises each w x w window of patch tokens into one token."""
from functools import partial
from typing import Optional, Tuple

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from .block import TransformerBlock
from .patch_embed import PatchEmbed


class WindowTokenizer(nn.Module):
    """Runs small transformer blocks inside non-overlapping windows and keeps each window's [CLS] output.

    Blocks use full MHSA, no QK-norm, no LayerScale and no RoPE; a learned local position embedding
    (``local_pos_embed``, index 0 for the window [CLS] ``w_cls``) is added.

    The image is processed in horizontal bands of window rows, each patch-embedded and tokenized on its own, so
    neither the full-resolution patch tokens nor all windows exist at once: a chunk holds at most ``chunk_size``
    windows (but at least one window row). Every window is independent, so the result is the one of embedding and
    tokenizing the whole image at once, up to fp32 summation order. In training each chunk is
    activation-checkpointed. ``ffn_chunk_tokens`` is passed to the blocks (:class:`TransformerBlock`).
    """

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 feedforward_channels: int,
                 num_layers: int,
                 window_size: int = 4,
                 qkv_bias: bool = True,
                 chunk_size: int = 128,
                 ffn_chunk_tokens: Optional[int] = None) -> None:
        super().__init__()
        self.window_size = window_size
        self.chunk_size = chunk_size
        self.local_pos_embed = nn.Parameter(torch.zeros(1, window_size * window_size + 1, embed_dims))
        self.w_cls = nn.Parameter(torch.zeros(1, 1, embed_dims))
        self.blocks = nn.ModuleList([
            TransformerBlock(embed_dims, num_heads, feedforward_channels, qkv_bias=qkv_bias, use_qk_norm=False,
                             ffn_chunk_tokens=ffn_chunk_tokens) for _ in range(num_layers)
        ])

    def _tokenize_band(self, patch_embed: PatchEmbed, band: torch.Tensor) -> torch.Tensor:
        """Image rows (B, 3, rows * w * p, W) -> one token per window (B, rows * W / (w p), C), row-major."""
        tokens, (height, width) = patch_embed(band)
        batch, _, channels = tokens.shape
        w = self.window_size
        rows, cols = height // w, width // w
        windows = tokens.view(batch, rows, w, cols, w, channels).permute(0, 1, 3, 2, 4, 5)
        windows = windows.reshape(batch * rows * cols, w * w, channels)
        windows = torch.cat((self.w_cls.expand(windows.shape[0], -1, -1), windows), dim=1) + self.local_pos_embed
        for block in self.blocks:
            windows = block(windows)
        return windows[:, 0].view(batch, rows * cols, channels)

    def forward(self, image: torch.Tensor, patch_embed: PatchEmbed) -> Tuple[torch.Tensor, Tuple[int, int]]:
        """Image (B, 3, H, W) -> window tokens (B, H/(w p) * W/(w p), C) on the grid (H/(w p), W/(w p)).

        ``patch_embed`` is the backbone's patch embedding (stride p), applied band by band.
        """
        batch, _, height, width = image.shape
        band = self.window_size * patch_embed.projection.stride[0]
        rows, cols = height // band, width // band
        rows_per_chunk = max(1, self.chunk_size // (batch * cols))
        use_cp = self.training and torch.is_grad_enabled()
        run = partial(self._tokenize_band, patch_embed)
        starts = range(0, rows, rows_per_chunk)
        strips = (image[:, :, start * band:min(rows, start + rows_per_chunk) * band] for start in starts)
        if torch.is_grad_enabled():
            outputs = [checkpoint(run, strip, use_reentrant=False) if use_cp else run(strip) for strip in strips]
            return torch.cat(outputs, dim=1), (rows, cols)
        # Without autograd, chunks write into one preallocated output: no list of pieces and no final concatenation.
        out = None
        for start, strip in zip(starts, strips):
            tokens = run(strip)
            if out is None:
                out = tokens.new_empty(batch, rows * cols, tokens.shape[-1])
            out[:, start * cols:start * cols + tokens.shape[1]] = tokens
        return out, (rows, cols)
