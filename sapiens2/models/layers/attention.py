"""Multi-head / grouped-query self-attention with optional QK-norm, RoPE and LayerScale."""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from .cpu_attention import self_attention
from .layer_scale import LayerScale
from .rmsnorm import RMSNorm
from .rope import RopeTables, apply_rope

QKVWeights = Tuple[torch.Tensor, Optional[torch.Tensor]]  # (weight (C + 2 kv, C), bias or None)


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
        self.q_norm = RMSNorm(self.head_dims, eps=1e-6) if use_qk_norm else nn.Identity()
        self.k_norm = RMSNorm(self.head_dims, eps=1e-6) if use_qk_norm else nn.Identity()
        self.proj = nn.Linear(embed_dims, embed_dims, bias=True)
        self.gamma = LayerScale(embed_dims, layer_scale_init_value) if layer_scale_init_value > 0 else nn.Identity()
        self._fused: Optional[Tuple[tuple, QKVWeights]] = None

    def fused_qkv(self) -> QKVWeights:
        """``wq``, ``wk``, ``wv`` concatenated into one projection, for inference without gradients.

        Built once and kept (one extra copy of the q/k/v weights) until any of the three changes: a new tensor,
        device or dtype, or an in-place update such as ``load_state_dict``. The checkpoint keys stay
        ``wq``/``wk``/``wv``.
        """
        if torch.is_grad_enabled():
            raise RuntimeError('Attention.fused_qkv() is for inference: call it under torch.no_grad() or '
                               'torch.inference_mode(); training uses wq, wk and wv.')
        tensors = [t for layer in (self.wq, self.wk, self.wv) for t in (layer.weight, layer.bias) if t is not None]
        key = tuple((t.data_ptr(), t._version, t.dtype, t.device) for t in tensors)
        if self._fused is None or self._fused[0] != key:
            weight = torch.cat([self.wq.weight, self.wk.weight, self.wv.weight])
            bias = None if self.wq.bias is None else torch.cat([self.wq.bias, self.wk.bias, self.wv.bias])
            self._fused = (key, (weight, bias))
        return self._fused[1]

    def _split_heads(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        batch, tokens, _ = x.shape
        return x.view(batch, tokens, heads, self.head_dims).transpose(1, 2)  # (B, heads, N, d)

    def forward(self, x: torch.Tensor, rope: Optional[RopeTables] = None,
                qkv: Optional[QKVWeights] = None) -> torch.Tensor:
        return self.gamma(self.proj(self._attend(x, rope, qkv)))

    def _attend(self, x: torch.Tensor, rope: Optional[RopeTables], qkv: Optional[QKVWeights]) -> torch.Tensor:
        """Attention output before the projection, (B, N, C); q, k and v are freed on return."""
        batch, tokens, channels = x.shape
        if qkv is None:
            x = _in_autocast_dtype(x)
            q, k, v = self.wq(x), self.wk(x), self.wv(x)
        else:
            kv_dims = self.num_kv_heads * self.head_dims
            q, k, v = F.linear(x, *qkv).split((channels, kv_dims, kv_dims), dim=-1)
        q = self.q_norm(self._split_heads(q, self.num_heads))
        k = self.k_norm(self._split_heads(k, self.num_kv_heads))
        v = self._split_heads(v, self.num_kv_heads)
        if rope is not None:
            # RoPE is per-head elementwise, so rotating the kv heads before the GQA expansion is equivalent.
            q, k = apply_rope(q, rope), apply_rope(k, rope)
        out = self_attention(q, k, v, enable_gqa=self.num_kv_heads != self.num_heads)
        return out.transpose(1, 2).reshape(batch, tokens, channels)


def _in_autocast_dtype(x: torch.Tensor) -> torch.Tensor:
    """``x`` cast once to the autocast dtype when autocast is on: the q, k and v projections would each cast it
    (bitwise the same values), three fp32 -> bf16 passes over the block's input instead of one."""
    device = x.device.type
    if x.dtype == torch.float32 and device in ('cpu', 'cuda') and torch.is_autocast_enabled(device):  # not meta
        return x.to(torch.get_autocast_dtype(device))
    return x
