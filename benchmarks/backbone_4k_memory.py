"""Peak memory of the 1B-4K backbone forward at 4096x3072 on the CPU, each mode in a fresh process.

    python benchmarks/backbone_4k_memory.py                      # fp32 and bf16, 1B-4K at 4096x3072
    python benchmarks/backbone_4k_memory.py --layers 2 --tokenizer-layers 1   # 1B widths, shallow: same activations
    python benchmarks/backbone_4k_memory.py --modes fp32 --arch sapiens2_nano --size 512 384   # quick check

Each mode runs in its own subprocess, so ``ru_maxrss`` (the peak resident set) covers exactly: the Python runtime and
libraries, the weights, the input image and the forward's activations. The model is built directly in the mode's
dtype with the official random init (weights are not loaded: a checkpoint loader has its own footprint). The
activations do not depend on the depth, so ``--layers``/``--tokenizer-layers`` give the same peak minus weights
in a fraction of the time. "runtime" is the resident set after the imports (Python, torch, MMEngine and what they
import), before the model exists.
``fp32`` is the default model; ``bf16`` keeps the weights in bfloat16 and runs the forward in bfloat16 (input cast
to bfloat16), the bf16-weights inference mode. Prints, in GiB: runtime, weights, peak, peak minus weights and
"activations" (peak minus the resident set once the model is built: input, activations, allocator slack); then the
forward time, and the bf16 output's relative L2 error against fp32 when both ran.
"""
import argparse
import json
import os
import os.path as osp
import resource
import subprocess
import sys
import tempfile
import time

DTYPES = ('fp32', 'bf16')
GIB = 2**30


def measure(args: argparse.Namespace) -> dict:
    """Child: build, run one forward under inference mode, report the figures (and save the output)."""
    import torch

    from sapiens2.models import Sapiens2
    from sapiens2.models.backbones.sapiens2 import resolve_arch
    torch.manual_seed(0)
    runtime = _rss_bytes()
    arch = resolve_arch(args.arch)
    arch.update({k: v for k, v in (('num_layers', args.layers), ('num_tokenizer_layers', args.tokenizer_layers))
                 if v is not None})
    dtype = torch.float32 if args.mode == 'fp32' else torch.bfloat16
    torch.set_default_dtype(dtype)
    model = Sapiens2(arch=arch, img_size=tuple(args.size), use_tokenizer=True, out_type='featmap').eval()
    torch.set_default_dtype(torch.float32)
    model.init_weights()
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    rss_built = _rss_bytes()
    image = torch.randn(1, 3, *args.size).to(dtype)
    start = time.perf_counter()
    with torch.inference_mode():
        out = model(image)[0]
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    torch.save(out.float().clone(), args.save)
    return dict(mode=args.mode, runtime=runtime, weights=weights, rss_built=rss_built, peak=peak, seconds=seconds,
                finite=bool(torch.isfinite(out).all()), threads=torch.get_num_threads())


def _rss_bytes() -> int:
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--modes', nargs='+', choices=DTYPES, default=list(DTYPES))
    parser.add_argument('--arch', default='sapiens2_1b')
    parser.add_argument('--size', type=int, nargs=2, default=(4096, 3072), metavar=('H', 'W'))
    parser.add_argument('--layers', type=int, help='override the number of transformer blocks')
    parser.add_argument('--tokenizer-layers', type=int, help='override the number of tokenizer blocks')
    parser.add_argument('--mode', choices=DTYPES, help=argparse.SUPPRESS)  # child: one mode, JSON out
    parser.add_argument('--save', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(measure(args)))
        return

    depth = ''.join(f', {n}={v}' for n, v in (('layers', args.layers), ('tokenizer layers', args.tokenizer_layers))
                    if v is not None)
    print(f'{args.arch}{depth} + 4K tokenizer at {args.size[0]}x{args.size[1]}, batch 1, CPU, one fresh process per '
          f'mode (load average {os.getloadavg()[0]:.1f})')
    print(f'{"mode":5s} {"runtime GiB":>11s} {"weights GiB":>11s} {"peak GiB":>9s} {"peak-weights":>12s} '
          f'{"activations":>11s} {"forward s":>10s} {"finite":>6s}')
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            save = osp.join(tmp, f'{mode}.pt')
            cmd = [sys.executable, __file__, '--mode', mode, '--arch', args.arch, '--size', *map(str, args.size),
                   '--save', save]
            cmd += ['--layers', str(args.layers)] if args.layers is not None else []
            cmd += ['--tokenizer-layers', str(args.tokenizer_layers)] if args.tokenizer_layers is not None else []
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f'{mode:5s} failed: {(proc.stderr.strip().splitlines() or ["?"])[-1]}')
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            activations = r['peak'] - r['rss_built']
            print(f'{mode:5s} {r["runtime"] / GIB:11.2f} {r["weights"] / GIB:11.2f} {r["peak"] / GIB:9.2f} '
                  f'{(r["peak"] - r["weights"]) / GIB:12.2f} {activations / GIB:11.2f} {r["seconds"]:10.1f} '
                  f'{str(r["finite"]):>6s}')
            import torch
            outputs[mode] = torch.load(save)
    if len(outputs) == 2:
        ref, low = outputs['fp32'], outputs['bf16']
        print(f'bf16 vs fp32 output: relative L2 error {float((low - ref).norm() / ref.norm()):.2e}')


if __name__ == '__main__':
    main()
