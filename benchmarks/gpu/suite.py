"""The GPU suite: inference by precision and batch size against transformers, training step and MFU, SDPA backend,
compile, peak memory.

Run it through ``benchmarks/gpu/run.sh`` (which makes the carried wheels importable); see README.md beside it.

    python benchmarks/gpu/suite.py                    # CUDA: 0.4b and 1b at 1024x768
    python benchmarks/gpu/suite.py --dry-run          # CPU: tiny arch at 64x48, one step of everything

For each arch it measures, with one warm-up and then timed iterations (synchronised):
* inference of backbone + a dense head (the normal head's layout) at each batch size of ``--infer-batches`` (1, 4
  and 16): ours in fp32 (the official numerics), ours under bf16 autocast eager and with ``compile=True,
  fuse_qkv=True``, and transformers' ``Sapiens2ForNormalEstimation`` with the same weights under bf16 autocast;
  images/s, peak memory, the SDPA kernels that ran (from the profiler), and each output's relative L2 distance to
  ours bf16 eager. An ``auto`` row says which of these ``--dtype auto`` (the inference default,
  ``sapiens2.utils.devices.auto_dtype``) runs on this device and repeats its figures;
* inference through the exported path (at the first batch size): the same task model in bf16 (weights and input),
  ``torch.export``-ed, saved as a ``.pt2`` file, loaded and run (what a deployment without the Python model runs;
  ``--no-exported`` skips it);
* a training step (bf16 autocast, activation checkpointing per block, AdamW, MSE loss on random targets): step time,
  images/s, MFU = 3 x forward FLOPs (counted by ``torch.utils.flop_counter``) / step time / peak bf16 FLOP/s, against
  the datasheet peak where the GPU is known and against a measured 8192^3 bf16 matmul.
One table goes to stdout and everything to a JSON file.
"""
import argparse
import json
import os
import os.path as osp
import platform
import resource
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F
from torch import nn

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
sys.path[:0] = [ROOT, osp.join(ROOT, 'benchmarks')]

from sapiens2.models import Sapiens2  # noqa: E402
from sapiens2.models.heads import DenseTrunkHead  # noqa: E402
from sapiens2.utils.atomic_save import atomic_write_text  # noqa: E402
from sapiens2.utils.devices import auto_dtype  # noqa: E402

# Dense bf16 tensor-core peak (no sparsity) from the datasheets, FLOP/s.
DATASHEET_BF16 = {'H200': 989.4e12, 'H100': 989.4e12, 'A100': 312e12, 'L40S': 362e12, 'B200': 2250e12}
SDPA_KERNELS = {'flash': '_scaled_dot_product_flash_attention', 'memory-efficient': '_efficient_attention',
                'cudnn': '_scaled_dot_product_cudnn_attention', 'math': '_scaled_dot_product_attention_math',
                'flash (cpu)': '_scaled_dot_product_flash_attention_for_cpu'}


class NormalLayoutHead(DenseTrunkHead):
    """The dense trunk + a 1x1 conv to 3 channels: the official normal head's layout, without the project import.
    ``narrow`` (the dry run) divides its widths by 16: a CPU without native bf16 takes seconds per bf16 deconvolution
    at the official widths, and the dry run checks the plumbing, not the figures."""

    def __init__(self, in_channels: int, narrow: bool = False) -> None:
        scale = 16 if narrow else 1
        super().__init__(in_channels, upsample_channels=tuple(c // scale for c in (768, 512, 256, 128)),
                         conv_out_channels=tuple(max(c // scale, 4) for c in (64, 32, 16)), conv_kernel_sizes=(3, 3, 3))
        self.conv_normal = nn.Conv2d(self.trunk_channels, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_normal(self.forward_trunk(x))


def register_peer_conversion() -> None:
    """``NormalLayoutHead`` converts to transformers as the official normal head does (same layout)."""
    from sapiens2.interop.transformers_config import HeadConverter, dense_trunk_describer, register_head_converter
    register_head_converter(NormalLayoutHead.__name__, HeadConverter(
        'normal', 'Sapiens2ForNormalEstimation', 'decode_head', dense_trunk_describer('conv_normal'), ('normals', )))


class TaskModel(nn.Module):
    def __init__(self, backbone: Sapiens2, head: nn.Module) -> None:
        super().__init__()
        self.backbone, self.decode_head = backbone, head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode_head(self.backbone(x)[-1])


def quiet_mmengine() -> None:
    """Keep MMEngine's per-parameter init report (INFO) off the table."""
    import logging

    from mmengine.logging import MMLogger
    MMLogger.get_current_instance().setLevel(logging.WARNING)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--dry-run', action='store_true', help='CPU, tiny arch at 64x48, one iteration of everything')
    parser.add_argument('--archs', nargs='+', default=['sapiens2_0.4b', 'sapiens2_1b'])
    parser.add_argument('--size', type=int, nargs=2, default=(1024, 768), metavar=('H', 'W'))
    parser.add_argument('--infer-batches', type=int, nargs='+', default=[1, 4, 16],
                        help='inference batch sizes (default 1 4 16)')
    parser.add_argument('--infer-iters', type=int, default=10)
    parser.add_argument('--train-batch', type=int, default=4)
    parser.add_argument('--train-iters', type=int, default=5)
    parser.add_argument('--warmup', type=int, default=1)
    parser.add_argument('--compile', choices=('both', 'on', 'off'), default='both',
                        help='inference with compile=True (on), without (off) or both')
    parser.add_argument('--train-compile', action='store_true', help='also time the training step compiled')
    parser.add_argument('--no-transformers', action='store_true', help='skip the transformers peer')
    parser.add_argument('--no-exported', action='store_true', help='skip the exported (.pt2, bf16) rows')
    parser.add_argument('--json', default=osp.join(os.environ.get('OUT', '.'), 'gpu_suite.json'))
    args = parser.parse_args(argv)
    if args.dry_run:
        args.archs, args.size = ['sapiens2_tiny'], (64, 48)
        args.infer_batches, args.train_batch, args.infer_iters, args.train_iters = [1, 2], 1, 1, 1
        args.warmup = 0
        if args.compile == 'both':
            args.compile = 'off'
    return args


class Timer:
    def __init__(self, device: torch.device) -> None:
        self.device = device

    def sync(self) -> None:
        if self.device.type == 'cuda':
            torch.cuda.synchronize(self.device)

    def run(self, fn: Callable[[], object], warmup: int, iters: int) -> Dict[str, float]:
        """Median seconds per call after ``warmup`` calls (the first one's time too: it includes compiling)."""
        self.reset_peak()
        self.sync()
        start = time.perf_counter()
        fn()
        self.sync()
        first = time.perf_counter() - start
        for _ in range(max(0, warmup - 1)):
            fn()
        times = []
        for _ in range(iters):
            self.sync()
            start = time.perf_counter()
            fn()
            self.sync()
            times.append(time.perf_counter() - start)
        return dict(seconds=statistics.median(times), first_call_s=first, peak_gib=self.peak_gib())

    def reset_peak(self) -> None:
        if self.device.type == 'cuda':
            torch.cuda.reset_peak_memory_stats(self.device)

    def peak_gib(self) -> float:
        if self.device.type == 'cuda':
            return torch.cuda.max_memory_allocated(self.device) / 2**30
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # process peak RSS on the CPU


def sdpa_kernels(fn: Callable[[], object]) -> List[str]:
    """Names of the SDPA kernels that one call of ``fn`` ran (from the profiler's op names)."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as prof:
        fn()
    names = {event.key for event in prof.key_averages()}
    found = [label for label, op in SDPA_KERNELS.items() if any(name.endswith(op) for name in names)]
    return found or ['none seen']


def matmul_peak(device: torch.device, dry_run: bool) -> float:
    """Measured bf16 matmul FLOP/s (8192^3 on a GPU, 1024^3 on a dry run)."""
    size = 1024 if dry_run else 8192
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    timer = Timer(device)
    seconds = timer.run(lambda: a @ b, warmup=1 if dry_run else 3, iters=1 if dry_run else 10)['seconds']
    return 2 * size**3 / seconds


def forward_flops(model: nn.Module, x: torch.Tensor) -> float:
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), torch.autocast(x.device.type, dtype=torch.bfloat16), counter:
        model(x)
    return float(counter.get_total_flops())


def build(arch: str, args: argparse.Namespace, device: torch.device, **backbone_kwargs) -> TaskModel:
    with device:
        backbone = Sapiens2(arch=arch, img_size=tuple(args.size), out_type='featmap', **backbone_kwargs)
        model = TaskModel(backbone, NormalLayoutHead(backbone.embed_dims, narrow=args.dry_run))
    model.backbone.init_weights()  # the official random init; the head keeps PyTorch's
    return model


def rel_l2(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.float(), b.float()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def inference(arch: str, args: argparse.Namespace, device: torch.device, timer: Timer) -> List[dict]:
    """The inference rows of ``arch`` at every batch size of ``--infer-batches``."""
    model = build(arch, args, device).eval()
    rows = []
    for index, batch in enumerate(args.infer_batches):
        rows += inference_at(model, arch, batch, args, device, timer, with_exported=index == 0 and not args.no_exported)
        if device.type == 'cuda':
            torch.cuda.empty_cache()
    return rows


def inference_at(model: TaskModel, arch: str, batch: int, args: argparse.Namespace, device: torch.device,
                 timer: Timer, with_exported: bool) -> List[dict]:
    """The inference rows of one batch size (the exported path too with ``with_exported``)."""
    x = torch.randn(batch, 3, *args.size, device=device)
    rows, outputs = [], {}
    common = dict(arch=arch, part='inference', batch=batch)

    def ours(dtype: Optional[torch.dtype] = torch.bfloat16) -> Callable[[], torch.Tensor]:
        def run() -> torch.Tensor:
            with torch.no_grad(), torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                return model(x)
        return run

    r = timer.run(ours(None), args.warmup, args.infer_iters)
    outputs['fp32'] = ours(None)()
    rows.append(dict(common, peer='ours', mode='fp32', dtype='fp32', output_key='fp32',
                     images_per_s=batch / r['seconds'], ms=1e3 * r['seconds'], first_call_s=r['first_call_s'],
                     peak_gib=r['peak_gib'], sdpa=sdpa_kernels(ours(None))))
    modes = {'off': ['eager'], 'on': ['compiled'], 'both': ['eager', 'compiled']}[args.compile]
    for mode in modes:
        model.backbone.fuse_qkv = mode == 'compiled'
        if mode == 'compiled':
            from sapiens2.models.layers.compiled_block import CompiledBlockRunner
            model.backbone.block_runner = CompiledBlockRunner()
        r = timer.run(ours(), args.warmup, args.infer_iters)
        outputs[mode] = ours()()
        failed = mode == 'compiled' and model.backbone.block_runner.failed
        rows.append(dict(common, peer='ours', mode=mode + (' (fell back)' if failed else ''), dtype='bf16',
                         output_key=mode, images_per_s=batch / r['seconds'], ms=1e3 * r['seconds'],
                         first_call_s=r['first_call_s'], peak_gib=r['peak_gib'], sdpa=sdpa_kernels(ours())))
    model.backbone.fuse_qkv, model.backbone.block_runner = False, None
    picked, why = auto_dtype(str(device))
    same = next((row for row in rows if row['dtype'] == picked and row['mode'] in ('fp32', 'eager')), None)
    if same is not None:  # the default runs one of the rows above: its figures, under the name users run
        rows.append(dict(same, mode='auto', dtype=picked, auto_why=why, same_as=same['mode']))
    if with_exported:
        try:
            exported = exported_bf16(model, x)
            r = timer.run(exported, args.warmup, args.infer_iters)
            outputs['exported'] = exported()
            rows.append(dict(common, peer='exported (.pt2)', mode='bf16', dtype='bf16', output_key='exported',
                             images_per_s=batch / r['seconds'], ms=1e3 * r['seconds'],
                             first_call_s=r['first_call_s'], peak_gib=r['peak_gib'], sdpa=sdpa_kernels(exported)))
        except Exception as error:  # torch.export may fail on another torch: report why and go on
            rows.append(dict(common, peer='exported (.pt2)', mode='unavailable',
                             error=f'{type(error).__name__}: {error}'.splitlines()[0]))
    if not args.no_transformers:
        try:
            from transformers_peer import build_peer
            register_peer_conversion()
            with device:
                peer = build_peer(model.backbone, model.decode_head).to(device)

            def theirs() -> torch.Tensor:
                with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16):
                    return peer(pixel_values=x).normals

            r = timer.run(theirs, args.warmup, args.infer_iters)
            outputs['transformers'] = theirs()
            import transformers
            rows.append(dict(common, peer=f'transformers {transformers.__version__}', mode='eager',
                             dtype='bf16', output_key='transformers', images_per_s=batch / r['seconds'],
                             ms=1e3 * r['seconds'],
                             first_call_s=r['first_call_s'], peak_gib=r['peak_gib'], sdpa=sdpa_kernels(theirs)))
        except Exception as error:  # the peer is optional: report why it is missing and go on
            rows.append(dict(common, peer='transformers', mode='unavailable',
                             error=f'{type(error).__name__}: {error}'))
    reference = outputs.get('eager')
    for row in rows:
        if reference is not None and row.get('output_key') in outputs:
            row['rel_l2_vs_ours_eager'] = rel_l2(outputs[row['output_key']], reference)
    return rows


def exported_bf16(model: TaskModel, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """The task model with bf16 weights, exported with ``torch.export``, saved as ``.pt2``, loaded back; returns a
    function running it on ``x`` in bf16."""
    import copy
    module = copy.deepcopy(model).to(torch.bfloat16).eval()
    x_bf16 = x.to(torch.bfloat16)
    with torch.no_grad():
        program = torch.export.export(module, (x_bf16, ))
    del module
    with tempfile.TemporaryDirectory(prefix='gpu-suite-') as folder:
        torch.export.save(program, osp.join(folder, 'model.pt2'))
        loaded = torch.export.load(osp.join(folder, 'model.pt2')).module()

    def run() -> torch.Tensor:
        with torch.no_grad():
            return loaded(x_bf16)
    return run


def training(arch: str, args: argparse.Namespace, device: torch.device, timer: Timer, peaks: dict) -> List[dict]:
    return [train_step(arch, args, device, timer, peaks, compiled)
            for compiled in ([False, True] if args.train_compile else [False])]


def train_step(arch: str, args: argparse.Namespace, device: torch.device, timer: Timer, peaks: dict,
               compiled: bool) -> dict:
    model = build(arch, args, device, with_cp=True, compile=compiled).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
    x = torch.randn(args.train_batch, 3, *args.size, device=device)
    target = torch.randn(args.train_batch, 3, *args.size, device=device)
    flops = 3 * forward_flops(model, x)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss = F.mse_loss(model(x).float(), target)
        loss.backward()
        optimizer.step()

    r = timer.run(step, args.warmup, args.train_iters)
    row = dict(arch=arch, part='train step', batch=args.train_batch, peer='ours',
               mode='compiled' if compiled else 'eager', dtype='bf16',
               images_per_s=args.train_batch / r['seconds'], ms=1e3 * r['seconds'], first_call_s=r['first_call_s'],
               peak_gib=r['peak_gib'], step_tflop=flops / 1e12, mfu_measured=flops / r['seconds'] / peaks['measured'])
    if peaks.get('datasheet'):
        row['mfu_datasheet'] = flops / r['seconds'] / peaks['datasheet']
    return row


def environment(device: torch.device) -> dict:
    env = dict(python=platform.python_version(), torch=torch.__version__, device=str(device))
    if device.type == 'cuda':
        env['gpu'] = torch.cuda.get_device_name(device)
    try:
        import transformers
        env['transformers'] = transformers.__version__
    except ImportError:
        env['transformers'] = None
    import mmengine
    env['mmengine'] = mmengine.__version__
    return env


def datasheet_peak(name: Optional[str]) -> Optional[float]:
    for key, value in DATASHEET_BF16.items():
        if name and key in name:
            return value
    return None


def print_table(rows: List[dict], header: bool = True) -> None:
    if header:
        print(f'{"arch":14s} {"part":10s} {"batch":>5s} {"peer":22s} {"mode":10s} {"dtype":5s} {"img/s":>8s} '
              f'{"ms":>9s} {"1st s":>7s} {"peak GiB":>8s} {"MFU":>11s} {"rel L2":>8s}  sdpa')
    for r in rows:
        start = f'{r["arch"]:14s} {r["part"]:10s} {r["batch"]:5d} {r["peer"]:22s} {r["mode"]:10s}'
        if 'error' in r:
            print(f'{start} {r["error"]}')
            continue
        mfu = (f'{100 * r["mfu_measured"]:4.1f}%' + (f'/{100 * r["mfu_datasheet"]:4.1f}%'
                                                     if 'mfu_datasheet' in r else '')) if 'mfu_measured' in r else ''
        rel = f'{r["rel_l2_vs_ours_eager"]:.1e}' if 'rel_l2_vs_ours_eager' in r else ''
        extra = f'  (= the {r["same_as"]} row: {r["auto_why"]})' if 'same_as' in r else ''
        print(f'{start} {r["dtype"]:5s} {r["images_per_s"]:8.2f} {r["ms"]:9.1f} {r["first_call_s"]:7.1f} '
              f'{r["peak_gib"]:8.2f} {mfu:>11s} {rel:>8s}  {",".join(r.get("sdpa", []))}{extra}')


def main(argv=None) -> int:
    args = parse_args(argv)
    quiet_mmengine()
    if not args.dry_run and not torch.cuda.is_available():
        print('no CUDA device: run with --dry-run on a CPU', file=sys.stderr)
        return 2
    device = torch.device('cpu' if args.dry_run else 'cuda')
    torch.manual_seed(0)
    start = time.perf_counter()
    env = environment(device)
    timer = Timer(device)
    peaks = dict(measured=matmul_peak(device, args.dry_run), datasheet=datasheet_peak(env.get('gpu')))
    rows: List[dict] = []
    print(f'{env}  size {args.size[0]}x{args.size[1]}  measured bf16 matmul {peaks["measured"] / 1e12:.1f} TFLOP/s'
          f'  (MFU columns: measured/datasheet peak)')
    print_table([])
    def add(new_rows: List[dict]) -> dict:  # printed and saved as they come: a time limit keeps the earlier rows
        print_table(new_rows, header=False)
        rows.extend(new_rows)
        return save(args, env, peaks, rows, start)

    for arch in args.archs:
        add(inference(arch, args, device, timer))
        result = add(training(arch, args, device, timer, peaks))
        if device.type == 'cuda':
            torch.cuda.empty_cache()
    print(f'JSON: {args.json}  ({result["wall_s"]:.0f} s)')
    return 0


def save(args: argparse.Namespace, env: dict, peaks: dict, rows: List[dict], start: float) -> dict:
    """Write the rows so far to ``--json``; returns what was written."""
    result = dict(environment=env, args={k: v for k, v in vars(args).items() if k != 'json'},
                  matmul_bf16_tflops=peaks['measured'] / 1e12,
                  datasheet_bf16_tflops=peaks['datasheet'] / 1e12 if peaks['datasheet'] else None,
                  rows=rows, wall_s=time.perf_counter() - start)
    os.makedirs(osp.dirname(osp.abspath(args.json)), exist_ok=True)
    atomic_write_text(args.json, json.dumps(result, indent=1))  # a run killed while writing keeps the last one whole
    return result


if __name__ == '__main__':
    sys.exit(main())
