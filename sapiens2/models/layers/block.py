"""Pre-norm transformer block: RMSNorm -> attention (+LayerScale), RMSNorm -> SwiGLU."""
from typing import Optional

import torch
from torch import nn

from .attention import Attention
from .rope import RopeTables
from .swiglu import SwiGLUFFN


class TransformerBlock(nn.Module):
    """``x + attn(ln1(x))`` then ``x + ffn(ln2(x))``. LayerScale applies to the attention branch only."""

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 feedforward_channels: int,
                 num_kv_heads: Optional[int] = None,
                 qkv_bias: bool = True,
                 use_qk_norm: bool = True,
                 layer_scale_init_value: float = 0.0) -> None:
        super().__init__()
        self.ln1 = nn.RMSNorm(embed_dims, eps=1e-6)
        self.attn = Attention(embed_dims, num_heads, num_kv_heads, qkv_bias, use_qk_norm, layer_scale_init_value)
        self.ln2 = nn.RMSNorm(embed_dims, eps=1e-6)
        self.ffn = SwiGLUFFN(embed_dims, feedforward_channels)

    def forward(self, x: torch.Tensor, rope: Optional[RopeTables] = None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), rope)
        return x + self.ffn(self.ln2(x))
