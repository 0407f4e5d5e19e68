"""bf16 self-attention on a CPU without AMX as blocks of matrix products, faster there than torch's fused kernel.

torch's fused CPU attention (``scaled_dot_product_attention``) uses the CPU's bf16 dot products only through AMX
tiles; with AVX512-BF16 alone it runs bf16 at its fp32 rate. oneDNN's bf16 matrix products do use AVX512-BF16, so
for bf16 inputs on such a CPU without gradients attention is computed per head and per block of queries: ``QK^T``
(bf16 out), a softmax (fp32 inside), ``PV``. A block's scores stay in cache, and the full ``N x N`` score matrix is
never held. With AMX the fused kernel is the faster one (its exp is cheaper than the softmax's) and stays.
Measurements and the accuracy cost (scores rounded to bf16 before the softmax): docs/performance.md, "A bf16
attention on the CPU".
"""
import torch
import torch.nn.functional as F

from sapiens2.utils.devices import torch_uses_amx

QUERY_BLOCK = 256  # rows of scores per product: 256 x 3072 bf16 scores (1.5 MiB) at the 0.4b's 1024x768
MIN_TOKENS = 128  # shorter sequences (the 4K tokenizer's 17-token windows, 128 per batch) stay on the batched kernel


@torch.compiler.assume_constant_result  # a fact of the machine: compiled blocks read it once, without a graph break
def fused_kernel_uses_amx() -> bool:
    """Whether torch's fused CPU attention computes bf16 with AMX tiles on this machine."""
    return torch_uses_amx()


def uses_blocked_attention(q: torch.Tensor, *kv: torch.Tensor) -> bool:
    """Whether :func:`self_attention` takes the blocked bf16 path for these queries (and keys and values)."""
    if q.device.type != 'cpu' or q.dtype != torch.bfloat16 or q.shape[-2] < MIN_TOKENS:
        return False
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, *kv))
    return not needs_grad and not fused_kernel_uses_amx()


def self_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, enable_gqa: bool = False) -> torch.Tensor:
    """``F.scaled_dot_product_attention(q, k, v, enable_gqa=...)`` (no mask, no dropout), blocked for bf16 CPU
    inference. q: (B, H, N, d); k, v: (B, H_kv, M, d) with H a multiple of H_kv."""
    if not uses_blocked_attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=enable_gqa)
    return blocked_attention(q, k.to(q.dtype), v.to(q.dtype))


@torch.compiler.disable
def blocked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The blocked path itself, whatever the CPU (benchmarks compare it with the fused kernel). q, k, v in one dtype."""
    batch, heads, tokens, head_dims = q.shape
    group = heads // k.shape[1]  # query heads per kv head
    keys_t = (k * head_dims**-0.5).transpose(-1, -2).contiguous()  # (B, H_kv, d, M), scaled: rows of K^T / sqrt(d)
    # (B, H, N, d) view of a (B, N, H, d) buffer: the caller's transpose back to (B, N, C) is then free
    out = q.new_empty(batch, tokens, heads, head_dims).transpose(1, 2)
    for b in range(batch):
        for h in range(heads):
            k_h, v_h = keys_t[b, h // group], v[b, h // group]
            for start in range(0, tokens, QUERY_BLOCK):
                rows = slice(start, start + QUERY_BLOCK)
                scores = torch.mm(q[b, h, rows], k_h)  # (block, M)
                torch.mm(scores.softmax(-1), v_h, out=out[b, h, rows])  # (block, d)
    return out
