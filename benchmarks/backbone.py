"""Backbone throughput next to this machine's dense matmul rate.

    python benchmarks/backbone.py --arch sapiens2_0.1b --size 512 384 --batch 1 --dtype fp32

Prints images/s, the achieved GFLOP/s (2 x multiply-adds of the forward, counted analytically) and the
measured GFLOP/s of a dense square matmul in the same dtype, so the fraction of the hardware limit is visible.
"""
import argparse
import time

import torch

from sapiens2.models import Sapiens2
from sapiens2.models.backbones.sapiens2 import resolve_arch

DTYPES = {'fp32': torch.float32, 'bf16': torch.bfloat16, 'fp16': torch.float16}


def forward_flops(arch: str, height: int, width: int, patch: int = 16) -> float:
    """Forward FLOPs (2 per multiply-add) of the encoder without tokenizer at one image."""
    s = resolve_arch(arch)
    c, n, h, ffn = s['embed_dims'], s['num_layers'], s['num_heads'], s['feedforward_channels']
    tokens = (height // patch) * (width // patch) + 9
    flops = 2 * (height // patch) * (width // patch) * (3 * patch * patch) * c  # patch embed
    for index in range(n):
        kv = h // 2 if 8 <= index < n - 8 else h
        kv_dims = kv * c // h
        flops += 2 * tokens * c * (2 * c + 2 * kv_dims)  # wq, proj, wk, wv
        flops += 2 * 2 * tokens * tokens * c  # q k^T and attn v
        flops += 2 * tokens * c * 3 * ffn  # w12 (2 ffn) and w3 (ffn)
    return float(flops)


def timed(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def matmul_gflops(dtype: torch.dtype, device: str, size: int = 2048, repeats: int = 5) -> float:
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    sync = torch.cuda.synchronize if device == 'cuda' else (lambda: None)
    seconds = timed(lambda: (a @ b, sync()), repeats)
    return 2 * size**3 / seconds / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--arch', default='sapiens2_0.1b')
    parser.add_argument('--size', type=int, nargs=2, default=(1024, 768), metavar=('H', 'W'))
    parser.add_argument('--batch', type=int, default=1)
    parser.add_argument('--dtype', choices=sorted(DTYPES), default='fp32')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    args = parser.parse_args()

    dtype = DTYPES[args.dtype]
    model = Sapiens2(arch=args.arch, img_size=tuple(args.size), out_type='featmap').to(args.device).eval()
    x = torch.randn(args.batch, 3, *args.size, device=args.device)
    sync = torch.cuda.synchronize if args.device == 'cuda' else (lambda: None)

    def run():
        with torch.no_grad(), torch.autocast(args.device, dtype=dtype, enabled=dtype != torch.float32):
            model(x)
        sync()

    seconds = timed(run, args.repeats)
    achieved = forward_flops(args.arch, *args.size) * args.batch / seconds / 1e9
    peak = matmul_gflops(dtype, args.device)
    print(f'arch={args.arch} input={args.size[0]}x{args.size[1]} batch={args.batch} dtype={args.dtype} '
          f'device={args.device} threads={torch.get_num_threads()}')
    print(f'images/s: {args.batch / seconds:.3f}   latency/batch: {seconds * 1e3:.1f} ms')
    print(f'achieved: {achieved:.1f} GFLOP/s   dense matmul: {peak:.1f} GFLOP/s   ratio: {achieved / peak:.2f}')


if __name__ == '__main__':
    main()
