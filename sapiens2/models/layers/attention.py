"""Multi-head / grouped-query self-attention with optional QK-norm, RoPE and LayerScale."""
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .layer_scale import LayerScale
from .rope import RopeTables, apply_rope


class Attention(nn.Module):
    """Self-attention with separate q/k/v projections (keys ``wq``, ``wk``, ``wv``, ``proj``).

    With ``num_kv_heads < num_heads`` it is grouped-query attention: each kv head serves
    ``num_heads / num_kv_heads`` consecutive query heads. QK-norm (``q_norm``/``k_norm``) is an RMSNorm over the head
    dim shared by all heads, applied before RoPE. LayerScale (``gamma``) scales the output when enabled.
    """

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 num_kv_heads: Optional[int] = None,
                 qkv_bias: bool = True,
                 use_qk_norm: bool = True,
                 layer_scale_init_value: float = 0.0) -> None:
        super().__init__()
        num_kv_heads = num_kv_heads or num_heads
        if embed_dims % num_heads or num_heads % num_kv_heads:
            raise ValueError(f'embed_dims ({embed_dims}) must be divisible by num_heads ({num_heads}) and num_heads '
                             f'by num_kv_heads ({num_kv_heads}).')
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dims = embed_dims // num_heads
        kv_dims = num_kv_heads * self.head_dims
        self.wq = nn.Linear(embed_dims, embed_dims, bias=qkv_bias)
        self.wk = nn.Linear(embed_dims, kv_dims, bias=qkv_bias)
        self.wv = nn.Linear(embed_dims, kv_dims, bias=qkv_bias)
        self.q_norm = nn.RMSNorm(self.head_dims, eps=1e-6) if use_qk_norm else nn.Identity()
        self.k_norm = nn.RMSNorm(self.head_dims, eps=1e-6) if use_qk_norm else nn.Identity()
        self.proj = nn.Linear(embed_dims, embed_dims, bias=True)
        self.gamma = LayerScale(embed_dims, layer_scale_init_value) if layer_scale_init_value > 0 else nn.Identity()

    def _split_heads(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        batch, tokens, _ = x.shape
        return x.view(batch, tokens, heads, self.head_dims).transpose(1, 2)  # (B, heads, N, d)

    def forward(self, x: torch.Tensor, rope: Optional[RopeTables] = None) -> torch.Tensor:
        batch, tokens, channels = x.shape
        q = self.q_norm(self._split_heads(self.wq(x), self.num_heads))
        k = self.k_norm(self._split_heads(self.wk(x), self.num_kv_heads))
        v = self._split_heads(self.wv(x), self.num_kv_heads)
        if rope is not None:
            # RoPE is per-head elementwise, so rotating the kv heads before the GQA expansion is equivalent.
            q, k = apply_rope(q, rope), apply_rope(k, rope)
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=self.num_kv_heads != self.num_heads)
        out = out.transpose(1, 2).reshape(batch, tokens, channels)
        return self.gamma(self.proj(out))
