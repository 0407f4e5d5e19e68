"""Pre-norm transformer block: RMSNorm -> attention (+LayerScale), RMSNorm -> SwiGLU."""
from typing import Optional

import torch
from torch import nn

from .attention import Attention, QKVWeights
from .rmsnorm import RMSNorm
from .rope import RopeTables
from .swiglu import SwiGLUFFN


class TransformerBlock(nn.Module):
    """``x + attn(ln1(x))`` then ``x + ffn(ln2(x))``. LayerScale applies to the attention branch only.

    ``ffn_chunk_tokens``: without gradients, run the feed-forward half over at most this many tokens (of the whole
    batch) at a time, adding into the block's own residual sum in place, which bounds its hidden activations (8C
    per token) for long sequences. The values are those of one pass up to fp32 summation order. None: one pass.
    """

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 feedforward_channels: int,
                 num_kv_heads: Optional[int] = None,
                 qkv_bias: bool = True,
                 use_qk_norm: bool = True,
                 layer_scale_init_value: float = 0.0,
                 ffn_chunk_tokens: Optional[int] = None) -> None:
        super().__init__()
        self.ffn_chunk_tokens = ffn_chunk_tokens
        self.ln1 = RMSNorm(embed_dims, eps=1e-6)
        self.attn = Attention(embed_dims, num_heads, num_kv_heads, qkv_bias, use_qk_norm, layer_scale_init_value)
        self.ln2 = RMSNorm(embed_dims, eps=1e-6)
        self.ffn = SwiGLUFFN(embed_dims, feedforward_channels)

    def forward(self, x: torch.Tensor, rope: Optional[RopeTables] = None,
                qkv: Optional[QKVWeights] = None) -> torch.Tensor:
        """``qkv``: optional fused q/k/v projection (:meth:`Attention.fused_qkv`) for inference."""
        x = x + self.attn(self.ln1(x), rope, qkv)
        chunk = self.ffn_chunk_tokens
        if chunk is None or torch.is_grad_enabled() or x.shape[:-1].numel() <= chunk:
            return x + self.ffn(self.ln2(x))
        x = x.contiguous()
        for part in x.view(-1, x.shape[-1]).split(chunk):  # views of x, this block's own tensor: updated in place
            part += self.ffn(self.ln2(part))
        return x
