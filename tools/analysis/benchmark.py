"""Throughput of a config's model forward (random weights unless a checkpoint is given).

Usage: python tools/analysis/benchmark.py CONFIG [--checkpoint C] [--batch-size 1] [--device cuda] [--dtype bf16]
       [--warmup 3] [--repeats 5] [--iters 5]

Runs ``warmup`` forwards, then ``repeats`` timings of ``iters`` forwards each, and prints the median.
"""
import argparse
import statistics
import sys
import time

import torch

from sapiens2.apis.builder import init_model, model_input_size
from sapiens2.utils.cli_errors import add_debug_argument, run_cli

DTYPES = dict(fp32=None, bf16=torch.bfloat16, fp16=torch.float16)


def _sync(device: torch.device) -> None:
    if device.type == 'cuda':
        torch.cuda.synchronize(device)


def benchmark(config: str, checkpoint=None, batch_size: int = 1, device=None, dtype: str = 'fp32', warmup: int = 3,
              repeats: int = 5, iters: int = 5, shape=None) -> dict:
    """{'ms_per_batch' (median), 'images_per_s', 'all_ms'} for forward passes of the config's model."""
    model = init_model(config, checkpoint, device)
    device = next(model.parameters()).device
    height, width = shape or model_input_size(model.cfg)
    inputs = torch.randn(batch_size, 3, height, width, device=device)
    autocast = torch.autocast(device.type, dtype=DTYPES[dtype], enabled=DTYPES[dtype] is not None)
    times = []
    with torch.no_grad(), autocast:
        for _ in range(warmup):
            model(inputs, None, mode='tensor')
        for _ in range(repeats):
            _sync(device)
            start = time.perf_counter()
            for _ in range(iters):
                model(inputs, None, mode='tensor')
            _sync(device)
            times.append((time.perf_counter() - start) * 1e3 / iters)
    median = statistics.median(times)
    return dict(ms_per_batch=median, images_per_s=batch_size * 1e3 / median, all_ms=times)


def main() -> int:
    parser = argparse.ArgumentParser(description='Forward throughput of a config\'s model')
    parser.add_argument('config')
    parser.add_argument('--checkpoint', default=None)
    parser.add_argument('--batch-size', type=int, default=1)
    parser.add_argument('--device', default=None, help='default: cuda when available')
    parser.add_argument('--dtype', choices=tuple(DTYPES), default='fp32')
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--iters', type=int, default=5)
    parser.add_argument('--shape', type=int, nargs=2, metavar=('H', 'W'))
    add_debug_argument(parser)
    args = parser.parse_args()
    result = benchmark(args.config, args.checkpoint, args.batch_size, args.device, args.dtype, args.warmup,
                       args.repeats, args.iters, args.shape)
    print(f'batch {args.batch_size}, {args.dtype}: median {result["ms_per_batch"]:.1f} ms/batch, '
          f'{result["images_per_s"]:.2f} images/s (repeats: {", ".join(f"{t:.1f}" for t in result["all_ms"])} ms)')
    return 0


if __name__ == '__main__':
    sys.exit(run_cli(main))
