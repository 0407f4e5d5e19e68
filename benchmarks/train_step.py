"""Training-step throughput: iterations/s, the data-loading share of step time and peak memory per config.

    python benchmarks/train_step.py                          # every tiny (nano) config, on the CPU
    python benchmarks/train_step.py CONFIG [CONFIG ...] --iters 20 --batch-size 4
    python benchmarks/train_step.py configs/pose/sapiens2_1b_pose_goliath-1024x768.py --device cuda

Each config trains ``--warmup + --iters`` iterations in its own process (tools' library path: the config's runner,
dataloader and optimizer, validation and checkpoints off). Timings are MMEngine's IterTimerHook records of the
measured iterations: ``data`` = waiting for the batch, ``time`` = the whole iteration. Peak memory is the process's
peak RSS on the CPU ("train MiB": its growth from just before training, i.e. model, optimizer state, activations
and data) and ``torch.cuda.max_memory_allocated`` on a GPU. Tiny configs read SynthHumans, which is generated
first when missing.
"""
import argparse
import glob
import json
import os
import os.path as osp
import resource
import subprocess
import sys
import tempfile

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
TINY_CONFIGS = ('configs/*/sapiens2_nano_*.py', 'projects/*/configs/sapiens2_nano_*.py')
NEVER = 10**9


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('configs', nargs='*', help='config files (default: every tiny config)')
    parser.add_argument('--iters', type=int, default=10, help='measured iterations')
    parser.add_argument('--warmup', type=int, default=2, help='iterations run before measuring')
    parser.add_argument('--batch-size', type=int, help='override train_dataloader.batch_size')
    parser.add_argument('--device', choices=['cpu', 'cuda'], default='cpu')
    parser.add_argument('--amp', action='store_true', help='train with AMP (tools/train.py --amp)')
    parser.add_argument('--one', action='store_true', help=argparse.SUPPRESS)  # child mode: one config, JSON out
    return parser.parse_args()


def measure(config: str, args: argparse.Namespace) -> dict:
    """Train ``config`` briefly in this process and return its figures."""
    import torch

    from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
    overrides = {
        'train_cfg.max_iters': args.warmup + args.iters, 'train_cfg.val_interval': NEVER,
        'default_hooks.checkpoint.interval': NEVER, 'default_hooks.checkpoint.save_last': False,
        'default_hooks.logger.interval': NEVER, 'val_dataloader': None, 'val_cfg': None, 'val_evaluator': None
    }
    if args.batch_size:
        overrides['train_dataloader.batch_size'] = args.batch_size
    with tempfile.TemporaryDirectory() as work_dir:
        cfg = prepare_train_config(load_config(config, overrides), config, work_dir, amp=args.amp)
        runner = build_runner(cfg)
        rss_before = _rss_bytes()
        runner.train()
        hub = runner.message_hub
        data = hub.get_scalar('train/data_time').data[0][args.warmup:]
        step = hub.get_scalar('train/time').data[0][args.warmup:]
    if args.device == 'cuda':
        peak = growth = torch.cuda.max_memory_allocated()
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        growth = peak - rss_before
    return dict(config=osp.relpath(config, ROOT), device=args.device, batch=cfg.train_dataloader.batch_size,
                it_per_s=len(step) / float(step.sum()), data_share=float(data.sum() / step.sum()),
                peak_mib=peak / 2**20, train_mib=growth / 2**20)


def _rss_bytes() -> int:
    """Current resident set size (Linux /proc; 0 elsewhere)."""
    try:
        with open('/proc/self/statm') as f:
            return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')
    except OSError:
        return 0


def run_child(config: str, args: argparse.Namespace) -> dict:
    flags = ['--iters', str(args.iters), '--warmup', str(args.warmup), '--device', args.device]
    flags += ['--batch-size', str(args.batch_size)] if args.batch_size else []
    flags += ['--amp'] if args.amp else []
    env = dict(os.environ, CUDA_VISIBLE_DEVICES='' if args.device == 'cpu' else os.environ.get(
        'CUDA_VISIBLE_DEVICES', '0'))
    proc = subprocess.run([sys.executable, __file__, config, '--one', *flags], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return dict(config=osp.relpath(config, ROOT), error=(proc.stderr.strip().splitlines() or ['?'])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    args = parse_args()
    if args.one:
        print(json.dumps(measure(args.configs[0], args)))
        return
    configs = args.configs or sorted(p for pattern in TINY_CONFIGS for p in glob.glob(osp.join(ROOT, pattern)))
    if any('synthhumans' in c for c in configs):
        from sapiens2.datasets.synthhumans import ensure_synthhumans
        ensure_synthhumans(osp.join(ROOT, 'data/synthhumans'))
    print(f'{"config":64s} {"device":6s} {"batch":>5s} {"it/s":>7s} {"data %":>7s} {"peak MiB":>9s} '
          f'{"train MiB":>9s}')
    for config in configs:
        r = run_child(osp.abspath(config), args)
        if 'error' in r:
            print(f'{r["config"]:64s} failed: {r["error"]}')
        else:
            print(f'{r["config"]:64s} {r["device"]:6s} {r["batch"]:5d} {r["it_per_s"]:7.2f} '
                  f'{100 * r["data_share"]:6.1f}% {r["peak_mib"]:9.0f} {r["train_mib"]:9.0f}')


if __name__ == '__main__':
    main()
