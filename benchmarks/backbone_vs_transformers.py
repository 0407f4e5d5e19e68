"""Our backbone and task models next to Hugging Face transformers' Sapiens2, same weights, same process, interleaved.

    python benchmarks/backbone_vs_transformers.py --peers all --tasks pose --repeats 3   # every peer this CPU runs
    python benchmarks/backbone_vs_transformers.py                       # 0.4b at 1024x768, fp32, CPU, all tasks
    python benchmarks/backbone_vs_transformers.py --tasks backbone --repeats 3 --profile
    python benchmarks/backbone_vs_transformers.py --arch sapiens2_nano --size 128 96 --repeats 1   # quick check
    python benchmarks/backbone_vs_transformers.py --quick              # a smoke run of every peer (seconds)

Peers, one model each (ours toggled between its modes): ``transformers`` (``Sapiens2Model`` with SDPA and the
official task heads as ``Sapiens2Head``, weights converted from ours by ``transformers_peer.py`` through
sapiens2.interop), ``ours`` (the default: the official function, checked against the official release's golden
vectors in tests/models/backbones/test_sapiens2.py; the official code itself is not a dependency, so ``ours`` is the
official model's row) and ``ours-fast`` (``compile=True, fuse_qkv=True``; heads in channels-last). Other peers
(``--peers``, or ``--peers all`` for every one): ``ours-bf16`` and ``transformers-bf16`` (ours / transformers' model
under ``torch.autocast('cpu', torch.bfloat16)``), ``ours-fast-bf16`` (``ours-fast``'s compiled blocks under that
autocast, heads in the default layout), ``ours-int8`` (``--dtype int8`` as this CPU runs it,
:meth:`Sapiens2.quantize_int8`: per-token int8 linear layers, compiled, with VNNI or AMX; torch's dynamic int8
linear layers (fbgemm) on AVX2; the rest under bf16 autocast where the CPU computes bf16 natively, else fp32;
``ours-fast-int8`` is its old name), ``transformers-bf16w`` (transformers' model and input in bf16, as
``from_pretrained(..., torch_dtype=torch.bfloat16)`` loads it; no autocast), ``ort-fp32`` and ``ort-int8``: each
part (the backbone, or backbone + head) exported to ONNX in a temporary folder (``sapiens2.deploy.export``, fp32
RoPE), and its dynamic int8 quantization (``sapiens2.deploy.quantize``), run by ONNX Runtime's CPU provider with as
many threads as torch. They are exported at ONNX opset 23 (attention as one fused ``Attention`` node);
``ort-fp32-op18`` is the same model at opset 18 (attention as MatMul-Softmax-MatMul).

A peer this CPU or this install cannot run is reported as skipped, with the reason, in one line: the bf16 peers
without native bf16 (AVX512-BF16 or AMX; torch would emulate it), ``ours-int8`` where ``--dtype int8`` is refused,
the ``ort-*`` peers without onnxruntime and onnxscript.

Every repeat times each peer's backbone once and each head on that peer's feature map; a task model's time is
backbone + head (an ONNX Runtime peer times the exported part whole). The header names the CPU and its speed flags
(AVX2, AVX-512, VNNI, BF16, AMX), the load average and the precision our default (``--dtype auto``) runs there.
Prints per part the median time and its spread ((max - min) / median over the repeats), the speed-up over
transformers in fp32 (the median of per-repeat ratios, and their range) and over transformers' fastest correct peer
(``vs best``: the fastest of ``transformers``, ``transformers-bf16`` and ``transformers-bf16w`` whose output is within
``CORRECT_REL_L2`` of ours), the achieved GFLOP/s (FLOPs counted by ``torch.utils.flop_counter``) as a share of a
dense fp32 GEMM of the backbone's largest shape timed in the same repeats, and how far each output is from ours (max
abs and relative L2; for seg also the share of pixels with the same label). ``--profile`` adds a profile by op of one
backbone forward of each of our torch peers asked for, and with ONNX Runtime peers the share of time of each ONNX op
type in one run.
"""
import argparse
import copy
import importlib.util
import os
import os.path as osp
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import torch
from torch import nn

sys.path.insert(0, osp.dirname(osp.abspath(__file__)))

from transformers_peer import build_peer, check_mapping  # noqa: E402

from sapiens2.models import Sapiens2  # noqa: E402
from sapiens2.models.layers.compiled_block import CompiledBlockRunner  # noqa: E402
from sapiens2.utils.devices import auto_dtype, autocast_dtype, check_dtype, cpu_runs_bf16, cpu_summary  # noqa: E402

PEERS = ('transformers', 'ours', 'ours-fast')
INT8_PEER = 'ours-int8'  # --dtype int8 as this CPU runs it (its own copy of the backbone)
ALL_PEERS = (*PEERS, 'transformers-bf16', 'transformers-bf16w', 'ours-bf16', 'ours-fast-bf16', INT8_PEER,
             'ort-fp32', 'ort-int8', 'ort-fp32-op18')
ALIASES = {'ours-fast-int8': INT8_PEER}  # old names still accepted on the command line
ORT_PEERS = ('ort-fp32', 'ort-int8', 'ort-fp32-op18')
AUTOCAST_PEERS = ('transformers-bf16', 'ours-bf16', 'ours-fast-bf16')  # under CPU bf16 autocast
FAST_PEERS = ('ours-fast', 'ours-fast-bf16')  # compiled blocks, fused q/k/v
BF16_PEERS = (*AUTOCAST_PEERS, 'transformers-bf16w')  # need a CPU with native bf16
THEIR_PEERS = ('transformers', 'transformers-bf16', 'transformers-bf16w')
ORT_MODULES = ('onnxruntime', 'onnxscript')  # what the ort-* peers import
#: A transformers peer is a fair reference (``vs best``) when its output is this close to ours (relative L2).
CORRECT_REL_L2 = 0.05
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


def relative_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    out, ref = out.float(), ref.float()
    return float((out - ref).norm() / ref.norm())


def differences(out: torch.Tensor, ref: torch.Tensor, task: str = '') -> str:
    out, ref = out.float(), ref.float()
    text = f'max abs {float((out - ref).abs().max()):.1e}, rel L2 {relative_l2(out, ref):.1e}'
    if task == 'seg':
        text += f', labels {100 * float((out.argmax(1) == ref.argmax(1)).float().mean()):.2f} % same'
    return text


class TaskModel(nn.Module):
    """Backbone + head as one module (what ``ort-*`` peers export); without a head, the backbone's feature map."""

    def __init__(self, backbone: nn.Module, head: Optional[nn.Module] = None) -> None:
        super().__init__()
        self.backbone, self.head = backbone, head if head is not None else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x)[-1])


def ort_sessions(backbone: Sapiens2, heads: Dict[str, Optional[nn.Module]], example: torch.Tensor, folder: str,
                 peers: List[str], profile: bool) -> Dict[str, Dict[str, object]]:
    """{part: {peer: onnxruntime session}}: each part (a head, or None for the backbone alone) exported with fp32
    RoPE, and quantized for int8."""
    import onnxruntime

    from sapiens2.deploy.export import export_onnx, set_rope_dtype
    from sapiens2.deploy.quantize import quantize_onnx
    sessions: Dict[str, Dict[str, object]] = {}
    for part, head in heads.items():
        start = time.perf_counter()
        model = copy.deepcopy(TaskModel(backbone, head)).eval()
        set_fast(model.backbone, False)  # ours-fast leaves compiled blocks, which export cannot trace
        set_rope_dtype(model, torch.float32)
        paths = {'ort-fp32': osp.join(folder, f'{part}.onnx'), 'ort-int8': osp.join(folder, f'{part}.int8.onnx'),
                 'ort-fp32-op18': osp.join(folder, f'{part}.op18.onnx')}
        with torch.no_grad():
            export_onnx(model, example, paths['ort-fp32'], dynamic_batch=False)
            if 'ort-fp32-op18' in peers:
                export_onnx(model, example, paths['ort-fp32-op18'], dynamic_batch=False, opset=18)
        if 'ort-int8' in peers:
            quantize_onnx(paths['ort-fp32'], paths['ort-int8'])
        del model
        sessions[part] = {}
        for peer in (p for p in ORT_PEERS if p in peers):
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads, options.inter_op_num_threads = torch.get_num_threads(), 1
            options.enable_profiling = profile
            options.profile_file_prefix = osp.join(folder, f'profile-{part}-{peer}')  # removed with the folder
            sessions[part][peer] = onnxruntime.InferenceSession(paths[peer], options,
                                                                providers=['CPUExecutionProvider'])
        print(f'  exported {part} to ONNX in {time.perf_counter() - start:.0f} s', flush=True)
    return sessions


def ort_profile(session) -> str:
    """The share of time of each ONNX op type in the runs of a profiling session (``enable_profiling``)."""
    import json
    with open(session.end_profiling()) as f:
        events = [e for e in json.load(f) if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time')]
    by_op: Dict[str, float] = {}
    for event in events:
        by_op[event['args']['op_name']] = by_op.get(event['args']['op_name'], 0.0) + event['dur']
    total = sum(by_op.values())
    return ', '.join(f'{op} {100 * t / total:.0f} %' for op, t in sorted(by_op.items(), key=lambda i: -i[1])[:6])


def autocasts(peer: str) -> bool:
    """Whether ``peer`` runs under CPU bf16 autocast (the int8 peer as ``--dtype int8`` runs the rest)."""
    return peer in AUTOCAST_PEERS or (peer == INT8_PEER and autocast_dtype('int8') is not None)


def set_fast(backbone: Sapiens2, fast: bool) -> None:
    backbone.fuse_qkv = fast
    backbone.block_runner = CompiledBlockRunner() if fast and backbone.block_runner is None else (
        backbone.block_runner if fast else None)


def skipped_peers(peers: List[str]) -> Dict[str, str]:
    """{peer: why} for the peers of ``peers`` that this CPU or this install does not run."""
    why: Dict[str, str] = {}
    if not cpu_runs_bf16():
        why.update({p: 'this CPU has neither AVX512-BF16 nor AMX (torch would emulate bf16, slower than fp32)'
                    for p in BF16_PEERS if p in peers})
    if INT8_PEER in peers:
        try:
            check_dtype('int8', 'cpu')
        except ValueError as error:
            why[INT8_PEER] = str(error)
    missing = [m for m in ORT_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        why.update({p: f'{" and ".join(missing)} not installed (pip install -e .[deploy])' for p in ORT_PEERS
                    if p in peers})
    return why


def spread(values: List[float]) -> float:
    """(max - min) / median of ``values``: how far the repeats of one peer are apart."""
    return (max(values) - min(values)) / statistics.median(values)


def ratios(ref: List[float], t: List[float]) -> List[float]:
    """Per-repeat speed-ups ``ref / t`` (the repeats are interleaved, so a load change hits both)."""
    return [r / s for r, s in zip(ref, t)]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--arch', default='sapiens2_0.4b')
    parser.add_argument('--size', type=int, nargs=2, default=(1024, 768), metavar=('H', 'W'))
    parser.add_argument('--tasks', nargs='+', choices=TASKS, default=list(TASKS))
    parser.add_argument('--repeats', type=int, default=2)
    parser.add_argument('--profile', action='store_true')
    parser.add_argument('--peers', nargs='+', choices=(*ALL_PEERS, *ALIASES, 'all'), default=list(PEERS),
                        help='transformers first (the reference of the speed-ups); ours is the reference of outputs; '
                        'all: every peer')
    parser.add_argument('--quick', action='store_true',
                        help='a smoke run of every peer but the compiled ones: sapiens2_nano at 64x48, seg, one repeat')
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f'--repeats must be at least 1, got {args.repeats}')
    peers = [ALIASES.get(p, p) for p in args.peers]
    if 'all' in peers:
        peers = list(ALL_PEERS)
    if args.quick:
        args.arch, args.size, args.tasks, args.repeats = 'sapiens2_nano', (64, 48), ['backbone', 'seg'], 1
        peers = [p for p in ALL_PEERS if p not in (*FAST_PEERS, INT8_PEER)]  # (compiling takes a test's time)
    args.peers = list(dict.fromkeys(['transformers', 'ours', *peers]))
    args.tasks = list(dict.fromkeys(args.tasks))
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    skipped = skipped_peers(args.peers)
    for reason in dict.fromkeys(skipped.values()):
        print(f'{" and ".join(p for p, r in skipped.items() if r == reason)} skipped: {reason}')
    peers = [p for p in args.peers if p not in skipped]
    quiet_mmengine()
    torch.manual_seed(0)
    print(f'{args.arch} at {args.size[0]}x{args.size[1]}, batch 1, fp32, CPU, {torch.get_num_threads()} threads, '
          f'median of {args.repeats} interleaved repeats after one warm-up, load average '
          + ' '.join(f'{v:.1f}' for v in os.getloadavg()) + ' (1, 5, 15 min)')
    print(f'CPU: {cpu_summary()}')
    default, why = auto_dtype('cpu')
    auto_peer = {'fp32': 'ours', 'bf16': 'ours-bf16', 'int8': INT8_PEER}.get(default, 'ours')
    print(f'our default (--dtype auto) here: {default} ({why}): peer {auto_peer}')
    print(f'key mapping check (fp32 RoPE, nano): max abs difference {check_mapping():.1e}')

    backbone = Sapiens2(arch=args.arch, img_size=tuple(args.size), out_type='featmap').eval()
    backbone.init_weights()
    theirs = build_peer(backbone)
    bf16w = 'transformers-bf16w' in peers  # transformers with bf16 weights, as torch_dtype=torch.bfloat16 loads it
    theirs_bf16 = copy.deepcopy(theirs).to(torch.bfloat16) if bf16w else None
    backbone_int8 = copy.deepcopy(backbone) if INT8_PEER in peers else None  # as --dtype int8 runs it
    if backbone_int8 is not None:
        backbone_int8.quantize_int8()
    grid = backbone.patch_resolution
    heads: Dict[str, Dict[str, nn.Module]] = {}
    for task in (t for t in args.tasks if t != 'backbone'):
        ours = build_head(task, backbone.embed_dims)
        heads[task] = {'ours': ours, 'ours-fast': copy.deepcopy(ours).to(memory_format=torch.channels_last),
                       'transformers': build_peer(backbone, ours).decode_head}
        if bf16w:
            heads[task]['transformers-bf16w'] = copy.deepcopy(heads[task]['transformers']).to(torch.bfloat16)
    x = torch.randn(1, 3, *args.size)
    # The largest GEMM of a block (tokens x C -> 8C, the SwiGLU w12): the machine's dense fp32 rate at this shape.
    tokens = grid[0] * grid[1] + backbone.num_extra_tokens
    gemm_a = torch.randn(tokens, backbone.embed_dims)
    gemm_b = torch.randn(backbone.embed_dims, 8 * backbone.embed_dims)

    def run_backbone(peer: str):
        with torch.no_grad():
            with torch.autocast('cpu', dtype=torch.bfloat16, enabled=autocasts(peer)):
                if peer == INT8_PEER:
                    return backbone_int8(x)[-1]
                if peer == 'transformers-bf16w':
                    return their_head_input(theirs_bf16(pixel_values=x.bfloat16()), backbone.num_extra_tokens, grid)
                if peer in THEIR_PEERS:
                    return their_head_input(theirs(pixel_values=x), backbone.num_extra_tokens, grid)
                set_fast(backbone, peer in FAST_PEERS)
                return backbone(x)[-1]

    def run_head(task: str, peer: str, feature: torch.Tensor):
        head = heads[task][peer if peer in heads[task] else 'transformers' if peer in THEIR_PEERS else 'ours']
        with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16, enabled=autocasts(peer)):
            if peer == 'ours-fast':
                return head(feature.contiguous(memory_format=torch.channels_last))
            return head(feature)

    with torch.no_grad():
        flops = dict(backbone=counted_flops(lambda: run_backbone('ours')))
        feature = run_backbone('ours')
        for task in heads:
            flops[task] = counted_flops(lambda: run_head(task, 'ours', feature))
    gemm_flops = 2 * gemm_a.shape[0] * gemm_a.shape[1] * gemm_b.shape[1]

    # times[part][peer]: seconds per repeat (a task: backbone + head); heads_alone[task][peer]: the head's share.
    parts = ['backbone', *heads]
    times: Dict[str, Dict[str, List[float]]] = {part: {p: [] for p in peers} for part in parts}
    heads_alone: Dict[str, Dict[str, List[float]]] = {task: {p: [] for p in peers} for task in heads}
    gemm: List[float] = []
    outputs: Dict[str, Dict[str, torch.Tensor]] = {part: {} for part in parts}
    profiles: List[str] = []
    onnx_peers = [p for p in peers if p in ORT_PEERS]
    # With ONNX Runtime peers, one part at a time (the sessions of the 0.4b hold 3-4 GB per part), else all at once.
    # The torch peers' backbone row is timed in one group only (that of the backbone part, else the first), so that
    # every peer of a row has one time per repeat of the same group (ratios pair interleaved runs).
    ort_parts = [p for p in args.tasks if p in parts]
    groups = [[p] for p in ort_parts] if onnx_peers else [list(heads)]
    backbone_group = next((i for i, g in enumerate(groups) if 'backbone' in g), 0)
    for index, group in enumerate(groups):
        tasks = [t for t in group if t in heads]
        with tempfile.TemporaryDirectory(prefix='bench-onnx-') as folder:
            sessions = ort_sessions(backbone, {p: heads[p]['ours'] if p in heads else None for p in group}, x,
                                    folder, onnx_peers, args.profile) if onnx_peers else {}
            for repeat in range(args.repeats + 1):  # round 0 warms up (and compiles); not timed
                seconds, _ = timed(lambda: gemm_a @ gemm_b)
                if repeat and index == backbone_group:
                    gemm.append(gemm_flops / seconds)
                for peer in peers:
                    if peer in ORT_PEERS:  # the whole exported part
                        for part in group:
                            seconds, out = timed(lambda: torch.from_numpy(
                                sessions[part][peer].run(None, {'x': x.numpy()})[0]))
                            if repeat:
                                times[part][peer].append(seconds)
                            outputs[part][peer] = out
                        continue
                    backbone_seconds, feature = timed(lambda: run_backbone(peer))
                    if repeat == 0:
                        print(f'  warm-up {peer} backbone: {backbone_seconds:.1f} s', flush=True)
                    elif index == backbone_group:
                        times['backbone'][peer].append(backbone_seconds)
                    outputs['backbone'][peer] = feature
                    for task in tasks:
                        seconds, out = timed(lambda: run_head(task, peer, feature))
                        if repeat:
                            times[task][peer].append(backbone_seconds + seconds)
                            heads_alone[task][peer].append(seconds)
                        outputs[task][peer] = out
            if args.profile:
                profiles += [f'ONNX Runtime profile of {part} {peer} ({args.repeats + 1} runs): '
                             f'{ort_profile(session)}' for part, by_peer in sessions.items()
                             for peer, session in by_peer.items()]
            sessions.clear()  # frees them before the next part's

    rate = statistics.median(gemm)
    print(f'dense fp32 GEMM {gemm_a.shape[0]}x{gemm_a.shape[1]}x{gemm_b.shape[1]}: {rate / 1e9:.0f} GFLOP/s '
          f'(spread {100 * spread(gemm):.0f} %)')
    print(f'{"part":9s} {"peer":18s} {"seconds":>8s} {"spread":>7s} {"speed-up":>8s} {"range":>11s} {"vs best":>8s} '
          f'{"GFLOP/s":>8s} {"% GEMM":>7s}  output vs ours')
    for part in parts:
        measured = [p for p in peers if times[part][p]]
        correct = [p for p in THEIR_PEERS if p in measured and (
            p == 'transformers' or relative_l2(outputs[part][p], outputs[part]['ours']) < CORRECT_REL_L2)]
        best = min(correct, key=lambda p: statistics.median(times[part][p]))
        name = 'backbone' if part == 'backbone' else f'{part} task'
        total = flops['backbone'] + (flops[part] if part != 'backbone' else 0)
        for peer in measured:
            t = times[part][peer]
            speedups = ratios(times[part]['transformers'], t)
            speedup_best = statistics.median(ratios(times[part][best], t))
            achieved = total / statistics.median(t)
            diff = '' if peer == 'ours' else differences(outputs[part][peer], outputs[part]['ours'], part)
            label = f'{peer}*' if peer == auto_peer else peer
            print(f'{name:9s} {label:18s} {statistics.median(t):8.2f} {100 * spread(t):6.0f}% '
                  f'{statistics.median(speedups):7.2f}x {min(speedups):5.2f}-{max(speedups):4.2f}x '
                  f'{speedup_best:7.2f}x {achieved / 1e9:8.1f} {100 * achieved / rate:6.1f}%  {diff}')
        print(f'{"":9s} vs best: against {best}, transformers\' fastest peer within rel L2 {CORRECT_REL_L2} of ours')
        if part in heads:
            alone = {peer: statistics.median(ratios(heads_alone[part]['transformers'], heads_alone[part][peer]))
                     for peer in peers if peer not in ('transformers', *ORT_PEERS)}
            print(f'{"":9s} head alone: {statistics.median(heads_alone[part]["transformers"]):.2f} s transformers; '
                  'speed-up ' + ', '.join(f'{peer} {ratio:.2f}x' for peer, ratio in alone.items()))
    print('(* the peer our default, --dtype auto, runs here; load average at the end '
          + ' '.join(f'{v:.1f}' for v in os.getloadavg()) + ')')
    for part in (p for p in parts if 'ort-fp32' in peers and times[p]['ort-fp32']):
        name = 'backbone' if part == 'backbone' else f'{part} task'
        print(f'{name}: ort-fp32 at {statistics.median(ratios(times[part]["ours"], times[part]["ort-fp32"])):.2f}x '
              'ours (torch eager fp32)')
        if 'ort-fp32-op18' in peers:
            fused = statistics.median(ratios(times[part]['ort-fp32-op18'], times[part]['ort-fp32']))
            print(f'{name}: ort-fp32 (opset 23, fused Attention) at {fused:.2f}x ort-fp32-op18')
    if args.profile:
        print('\n'.join(profiles))
        from torch.profiler import ProfilerActivity, profile
        for peer in (p for p in ('ours', 'ours-bf16', *FAST_PEERS, INT8_PEER) if p in peers):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                run_backbone(peer)
            print(f'profile of one {peer} backbone forward')
            print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=12, max_name_column_width=60))


if __name__ == '__main__':
    main()
