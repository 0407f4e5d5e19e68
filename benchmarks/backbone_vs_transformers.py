"""Our backbone and task models next to Hugging Face transformers' Sapiens2, same weights, same process, interleaved.

    python benchmarks/backbone_vs_transformers.py                       # 0.4b at 1024x768, fp32, CPU, all tasks
    python benchmarks/backbone_vs_transformers.py --tasks backbone --repeats 3 --profile
    python benchmarks/backbone_vs_transformers.py --arch sapiens2_nano --size 128 96 --repeats 1   # quick check

Peers, one model each (ours toggled between its modes): ``transformers`` (``Sapiens2Model`` with SDPA and the
official task heads as ``Sapiens2Head``, weights converted from ours by ``transformers_peer.py`` through
sapiens2.interop), ``ours`` (the default: the official function) and ``ours-fast`` (``compile=True,
fuse_qkv=True``; heads in channels-last).
Every repeat times each peer's backbone once and each head on that peer's feature map; a task model's time is
backbone + head. Prints per part the median time, the speed-up over transformers (median of per-repeat ratios),
the achieved GFLOP/s (FLOPs counted by ``torch.utils.flop_counter``) as a share of a dense fp32 GEMM of the
backbone's largest shape timed in the same repeats, and how far each output is from ours (max abs and relative
L2). ``--profile`` adds a profile by op of one backbone forward of ``ours`` and ``ours-fast``.
"""
import argparse
import copy
import os
import os.path as osp
import statistics
import sys
import time
from typing import Callable, Dict, List

import torch
from torch import nn

sys.path.insert(0, osp.dirname(osp.abspath(__file__)))

from transformers_peer import build_peer, check_mapping  # noqa: E402

from sapiens2.models import Sapiens2  # noqa: E402
from sapiens2.models.layers.compiled_block import CompiledBlockRunner  # noqa: E402

PEERS = ('transformers', 'ours', 'ours-fast')
TASKS = ('backbone', 'pose', 'seg', 'normal')


def quiet_mmengine() -> None:
    """Keep MMEngine's per-parameter init report (INFO) off the table."""
    import logging

    from mmengine.logging import MMLogger
    MMLogger.get_current_instance().setLevel(logging.WARNING)


def build_head(task: str, embed_dims: int) -> nn.Module:
    """Our official head of ``task`` (mmpose / mmseg / the normal project), randomly initialised."""
    if task == 'pose':
        from sapiens2.models.heads import Sapiens2HeatmapHead
        head = Sapiens2HeatmapHead(in_channels=embed_dims)
    elif task == 'seg':
        from sapiens2.models.heads import Sapiens2SegHead
        head = Sapiens2SegHead(in_channels=embed_dims, num_classes=29)
    else:
        from sapiens2_normal import NormalHead
        head = NormalHead(in_channels=embed_dims, conv_kernel_sizes=(3, 3, 3))
    head.init_weights()
    return head.eval()


def their_head_input(backbone_output, num_prefix: int, grid) -> torch.Tensor:
    """The feature map transformers' ``Sapiens2For*.forward`` builds from ``last_hidden_state``."""
    tokens = backbone_output.last_hidden_state[:, num_prefix:]
    return tokens.transpose(1, 2).reshape(tokens.shape[0], -1, *grid)


def counted_flops(fn: Callable[[], object]) -> float:
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with counter:
        fn()
    return float(counter.get_total_flops())


def timed(fn: Callable[[], object]):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def differences(out: torch.Tensor, ref: torch.Tensor) -> str:
    out, ref = out.float(), ref.float()
    return f'max abs {float((out - ref).abs().max()):.1e}, rel L2 {float((out - ref).norm() / ref.norm()):.1e}'


def set_fast(backbone: Sapiens2, fast: bool) -> None:
    backbone.fuse_qkv = fast
    backbone.block_runner = CompiledBlockRunner() if fast and backbone.block_runner is None else (
        backbone.block_runner if fast else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--arch', default='sapiens2_0.4b')
    parser.add_argument('--size', type=int, nargs=2, default=(1024, 768), metavar=('H', 'W'))
    parser.add_argument('--tasks', nargs='+', choices=TASKS, default=list(TASKS))
    parser.add_argument('--repeats', type=int, default=2)
    parser.add_argument('--profile', action='store_true')
    args = parser.parse_args()
    quiet_mmengine()
    torch.manual_seed(0)
    print(f'{args.arch} at {args.size[0]}x{args.size[1]}, batch 1, fp32, CPU, {torch.get_num_threads()} threads, '
          f'median of {args.repeats} interleaved repeats after one warm-up, load average {os.getloadavg()[0]:.1f}')
    print(f'key mapping check (fp32 RoPE, nano): max abs difference {check_mapping():.1e}')

    backbone = Sapiens2(arch=args.arch, img_size=tuple(args.size), out_type='featmap').eval()
    backbone.init_weights()
    theirs = build_peer(backbone)
    grid = backbone.patch_resolution
    heads: Dict[str, Dict[str, nn.Module]] = {}
    for task in (t for t in args.tasks if t != 'backbone'):
        ours = build_head(task, backbone.embed_dims)
        heads[task] = {'ours': ours, 'ours-fast': copy.deepcopy(ours).to(memory_format=torch.channels_last),
                       'transformers': build_peer(backbone, ours).decode_head}
    x = torch.randn(1, 3, *args.size)
    # The largest GEMM of a block (tokens x C -> 8C, the SwiGLU w12): the machine's dense fp32 rate at this shape.
    tokens = grid[0] * grid[1] + backbone.num_extra_tokens
    gemm_a = torch.randn(tokens, backbone.embed_dims)
    gemm_b = torch.randn(backbone.embed_dims, 8 * backbone.embed_dims)

    def run_backbone(peer: str):
        with torch.no_grad():
            if peer == 'transformers':
                return their_head_input(theirs(pixel_values=x), backbone.num_extra_tokens, grid)
            set_fast(backbone, peer == 'ours-fast')
            return backbone(x)[-1]

    def run_head(task: str, peer: str, feature: torch.Tensor):
        head = heads[task][peer]
        with torch.no_grad():
            if peer == 'ours-fast':
                return head(feature.contiguous(memory_format=torch.channels_last))
            return head(feature)

    with torch.no_grad():
        flops = dict(backbone=counted_flops(lambda: run_backbone('ours')))
        feature = run_backbone('ours')
        for task in heads:
            flops[task] = counted_flops(lambda: run_head(task, 'ours', feature))
    gemm_flops = 2 * gemm_a.shape[0] * gemm_a.shape[1] * gemm_b.shape[1]

    times: Dict[str, Dict[str, List[float]]] = {part: {p: [] for p in PEERS} for part in ['backbone', *heads]}
    gemm: List[float] = []
    outputs: Dict[str, Dict[str, torch.Tensor]] = {}
    for repeat in range(args.repeats + 1):  # round 0 warms up (and compiles); not timed
        seconds, _ = timed(lambda: gemm_a @ gemm_b)
        if repeat:
            gemm.append(gemm_flops / seconds)
        for peer in PEERS:
            seconds, feature = timed(lambda: run_backbone(peer))
            if repeat == 0:
                print(f'  warm-up {peer} backbone: {seconds:.1f} s', flush=True)
            else:
                times['backbone'][peer].append(seconds)
            outputs.setdefault('backbone', {})[peer] = feature
            for task in heads:
                seconds, out = timed(lambda: run_head(task, peer, feature))
                if repeat:
                    times[task][peer].append(seconds)
                outputs.setdefault(task, {})[peer] = out

    rate = statistics.median(gemm)
    print(f'dense fp32 GEMM {gemm_a.shape[0]}x{gemm_a.shape[1]}x{gemm_b.shape[1]}: {rate / 1e9:.0f} GFLOP/s')
    print(f'{"part":9s} {"peer":12s} {"seconds":>8s} {"speed-up":>8s} {"GFLOP/s":>8s} {"% GEMM":>7s}  output vs ours')
    for task in ['backbone', *heads]:
        for peer in PEERS:
            t = times['backbone'][peer] if task == 'backbone' else [
                b + h for b, h in zip(times['backbone'][peer], times[task][peer])]
            ref = times['backbone']['transformers'] if task == 'backbone' else [
                b + h for b, h in zip(times['backbone']['transformers'], times[task]['transformers'])]
            total = flops['backbone'] + (flops[task] if task != 'backbone' else 0)
            speedup = statistics.median(r / s for r, s in zip(ref, t))
            achieved = total / statistics.median(t)
            name = 'backbone' if task == 'backbone' else f'{task} task'
            diff = '' if peer == 'ours' else differences(outputs[task][peer], outputs[task]['ours'])
            print(f'{name:9s} {peer:12s} {statistics.median(t):8.2f} {speedup:7.2f}x {achieved / 1e9:8.1f} '
                  f'{100 * achieved / rate:6.1f}%  {diff}')
        if task != 'backbone':
            alone = {peer: statistics.median(r / s for r, s in zip(times[task]['transformers'], times[task][peer]))
                     for peer in ('ours', 'ours-fast')}
            print(f'{"":9s} head alone: {statistics.median(times[task]["transformers"]):.2f} s transformers; speed-up '
                  f'ours {alone["ours"]:.2f}x, ours-fast {alone["ours-fast"]:.2f}x')
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        for peer in ('ours', 'ours-fast'):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                run_backbone(peer)
            print(f'profile of one {peer} backbone forward')
            print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=12))


if __name__ == '__main__':
    main()
