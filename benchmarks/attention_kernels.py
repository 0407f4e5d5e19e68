"""Time one attention layer's kernel on the CPU, the way torch offers it, in fp32 and bf16.

Usage: OMP_NUM_THREADS=2 python benchmarks/attention_kernels.py [--tokens 3072] [--heads 16] [--head-dim 64]

Attention is the part of the 0.4b backbone that int8 linear layers do not touch (docs/performance.md, "Where the
int8 time goes"): this prints, per dtype, torch's fused CPU kernel (``scaled_dot_product_attention``), the same
product unfused (QK^T, softmax, PV, each timed alone), compiled ``flex_attention``, and in bf16 the project's blocked
kernel (``sapiens2/models/layers/cpu_attention.py``, what the backbone runs in bf16 on a CPU without AMX), with each
one's error against fp32 SDPA and its rate in GFLOP/s (4 N^2 d per head).
"""
import argparse
import time
from typing import Callable, Optional, Sequence

import torch
import torch.nn.functional as F

from sapiens2.models.layers.cpu_attention import blocked_attention, fused_kernel_uses_amx


def best_of(fn: Callable[[], torch.Tensor], repeats: int) -> float:
    fn()  # warm-up (and compilation)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def unfused(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scores = (q @ k.transpose(-1, -2)) * q.shape[-1]**-0.5  # (B, H, N, N)
    return scores.softmax(-1) @ v


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--tokens', type=int, default=3072, help='sequence length (0.4b at 1024x768: 3072)')
    parser.add_argument('--heads', type=int, default=16)
    parser.add_argument('--head-dim', type=int, default=64)
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args(argv)
    from torch.nn.attention.flex_attention import flex_attention
    torch.manual_seed(0)
    shape = (1, args.heads, args.tokens, args.head_dim)
    q, k, v = (torch.randn(shape) for _ in range(3))
    flops = 4 * args.heads * args.tokens**2 * args.head_dim
    flex = torch.compile(flex_attention, dynamic=False)
    print(f'torch {torch.__version__}, {torch.get_num_threads()} threads, q/k/v {tuple(shape)}, AMX: '
          f'{"yes (the backbone keeps the fused kernel)" if fused_kernel_uses_amx() else "no"}')
    print('| dtype | kernel | seconds | GFLOP/s | rel L2 vs fp32 SDPA |\n|---|---|---|---|---|')
    with torch.inference_mode():
        reference = F.scaled_dot_product_attention(q, k, v)
        for dtype in (torch.float32, torch.bfloat16):
            qd, kd, vd = (t.to(dtype) for t in (q, k, v))
            scores = qd @ kd.transpose(-1, -2)
            rows = {'SDPA (fused CPU kernel)': lambda: F.scaled_dot_product_attention(qd, kd, vd),
                    'unfused': lambda: unfused(qd, kd, vd), 'flex_attention, compiled': lambda: flex(qd, kd, vd)}
            if dtype == torch.bfloat16:
                blocked = 'blocked (sapiens2: the backbone\'s bf16 path without AMX)'
                rows[blocked] = lambda: blocked_attention(qd, kd, vd)
            for name, fn in rows.items():
                seconds = best_of(fn, args.repeats)
                error = ((fn().float() - reference).norm() / reference.norm()).item()
                print(f'| {str(dtype)[6:]} | {name} | {seconds:.3f} | {flops / seconds / 1e9:.0f} | {error:.1e} |')
            parts = {'QK^T': lambda: qd @ kd.transpose(-1, -2), 'softmax': lambda: scores.softmax(-1),
                     'PV': lambda: scores @ vd}
            print(f'| {str(dtype)[6:]} | unfused parts | ' +
                  ', '.join(f'{name} {best_of(fn, args.repeats):.3f}' for name, fn in parts.items()) + ' | | |')


if __name__ == '__main__':
    main()
