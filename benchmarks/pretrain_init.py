"""Does a pretrained tiny backbone help as the initialisation of small task models? Fine-tune with and without it.

    OMP_NUM_THREADS=1 python benchmarks/pretrain_init.py --workers 2 \
        --backbone full=work_dirs/pretrain_probe/full/full-s0/teacher_backbone.safetensors
    OMP_NUM_THREADS=1 python benchmarks/pretrain_init.py --quick --backbone full=PATH   # smoke run

Each task's tiny SynthHumans recipe (``TASKS``: the repository's 128x96 configs, patch 8) is trained by
``tools/train.py`` with the tiny arch, once from random init and once from each ``--backbone NAME=FILE`` (a bare-key
backbone, e.g. the teacher exported by ``benchmarks/pretrain_probe.py``), everything else identical (schedule,
learning rate, augmentation, seed). Every run writes one JSON (its validation metrics, CPU time) under ``--results``
and is skipped when that file exists; ``--report`` prints the table from them.
"""
import argparse
import json
import os
import os.path as osp
import resource
import subprocess
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
# task: (config, key of the head whose in_channels follow the backbone, metric, higher is better)
TASKS = {
    'seg': ('configs/seg/sapiens2_nano_seg_synthhumans-128x96.py', 'decode_head', 'mIoU', True),
    'normal': ('projects/normal/configs/sapiens2_nano_normal_synthhumans-128x96.py', 'decode_head', 'mean_angle',
               False),
    'pointmap': ('projects/pointmap/configs/sapiens2_nano_pointmap_synthhumans-128x96.py', 'decode_head', 'l2_mean',
                 False),
    'pose': ('configs/pose/sapiens2_nano_pose_synthhumans-128x96.py', 'head', 'PCK', True),
}
ARCH, EMBED_DIMS = 'sapiens2_tiny', 128
QUICK_ITERS = 6


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--backbone', action='append', default=[], metavar='NAME=FILE',
                        help='pretrained backbone to compare with random init (repeatable)')
    parser.add_argument('--tasks', nargs='+', default=list(TASKS), choices=list(TASKS))
    parser.add_argument('--seeds', nargs='+', type=int, default=[0])
    parser.add_argument('--quick', action='store_true', help=f'{QUICK_ITERS} iterations per run (smoke test)')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--data-root', default='data/synthhumans', help='SynthHumans set (rendered when missing: '
                        'the default 256 + 64 images at 256x192, seed 0)')
    parser.add_argument('--results', default=None, help='default benchmarks/results/pretrain_init[_quick]')
    parser.add_argument('--work-dir', default=None, help='default work_dirs/pretrain_init[_quick]')
    parser.add_argument('--report', action='store_true', help='only print the table of the cached runs')
    parser.add_argument('--job', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    suffix = '_quick' if args.quick else ''
    args.results = args.results or osp.join(ROOT, 'benchmarks', 'results', f'pretrain_init{suffix}')
    args.work_dir = args.work_dir or osp.join(ROOT, 'work_dirs', f'pretrain_init{suffix}')
    args.inits = {'random': None}
    for item in args.backbone:
        name, sep, path = item.partition('=')
        if not sep or not name or name == 'random':
            raise SystemExit(f'--backbone needs NAME=FILE with a NAME other than "random", got {item!r}')
        if not osp.isfile(path):
            raise SystemExit(f'--backbone {name}: {path} is not a file')
        args.inits[name] = osp.abspath(path)
    return args


def _cell(args, task: str, init: str, seed: int) -> str:
    return osp.join(args.results, f'{task}-{init}-s{seed}.json')


def derived_config(args, task: str, init: str, seed: int) -> str:
    """A config that inherits the task recipe and only changes the arch, the head width and the backbone init."""
    config, head, _, _ = TASKS[task]
    init_cfg = None if args.inits[init] is None else dict(type='Pretrained', checkpoint=args.inits[init])
    path = osp.join(args.work_dir, f'{task}-{init}-s{seed}.py')
    lines = [f'_base_ = [{osp.join(ROOT, config)!r}]',
             f'model = dict(backbone=dict(arch={ARCH!r}, init_cfg={init_cfg!r}),',
             f'             {head}=dict(in_channels={EMBED_DIMS}))',
             f'randomness = dict(seed={seed})']
    os.makedirs(args.work_dir, exist_ok=True)
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path


def _val_metrics(work_dir: str, metric: str) -> dict:
    rows = []
    for folder in sorted(os.listdir(work_dir)):
        path = osp.join(work_dir, folder, 'vis_data', 'scalars.json')
        if osp.isfile(path):
            with open(path) as f:
                rows += [json.loads(line) for line in f]
    val = [r for r in rows if any(k == metric or k.endswith('/' + metric) for k in r)]
    if not val:
        raise RuntimeError(f'no validation {metric} in {work_dir}: did the run fail?')
    return val[-1]


def run_job(args, task: str, init: str, seed: int) -> None:
    config = derived_config(args, task, init, seed)
    work_dir = osp.join(args.work_dir, f'{task}-{init}-s{seed}')
    options = [f'{split}_dataloader.dataset.data_root={args.data_root}' for split in ('train', 'val', 'test')]
    if args.quick:
        options += [f'train_cfg.max_iters={QUICK_ITERS}', f'train_cfg.val_interval={QUICK_ITERS}',
                    'val_dataloader.dataset.indices=8']
    command = [sys.executable, 'tools/train.py', config, '--work-dir', work_dir, '--cfg-options', *options]
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(work_dir + '.log', 'w') as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    metric = TASKS[task][2]
    os.makedirs(args.results, exist_ok=True)
    with open(_cell(args, task, init, seed), 'w') as f:
        json.dump(dict(task=task, init=init, checkpoint=args.inits[init], seed=seed, arch=ARCH, recipe=TASKS[task][0],
                       metric=metric, metrics=_val_metrics(work_dir, metric),
                       cpu_s=after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                       wall_s=time.perf_counter() - start), f, indent=1)


def schedule(args) -> None:
    from sapiens2.datasets.synthhumans import ensure_synthhumans
    if args.data_root == 'data/synthhumans':
        ensure_synthhumans(osp.join(ROOT, args.data_root))
    jobs = [(t, i, s) for s in args.seeds for t in args.tasks for i in args.inits
            if not osp.isfile(_cell(args, t, i, s))]
    base = [sys.executable, osp.abspath(__file__), '--results', args.results, '--work-dir', args.work_dir,
            '--data-root', args.data_root] + (['--quick'] if args.quick else [])
    base += [a for name, path in args.inits.items() if path for a in ('--backbone', f'{name}={path}')]
    threads = '1' if args.workers > 1 else '2'
    env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    os.makedirs(args.work_dir, exist_ok=True)
    running, start = {}, time.perf_counter()
    while jobs or running:
        while jobs and len(running) < args.workers:
            task, init, seed = jobs.pop(0)
            proc = subprocess.Popen(base + ['--job', f'{task}:{init}:{seed}'], cwd=ROOT, env=env)
            running[proc.pid] = f'{task}:{init}:{seed}'
            print(f'[{time.perf_counter() - start:7.0f} s] start {running[proc.pid]}', flush=True)
        pid, status = os.wait()
        name = running.pop(pid, None)
        if name is None:
            continue
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f'run {name} failed; see its log under {args.work_dir}')
        print(f'[{time.perf_counter() - start:7.0f} s] done  {name}', flush=True)


def report(args) -> str:
    import numpy as np
    lines = ['| task (metric) | ' + ' | '.join(f'init: {i}' for i in args.inits) + ' |',
             '|---|' + '---|' * len(args.inits)]
    cpu = 0.0
    for task in args.tasks:
        _, _, metric, higher = TASKS[task]
        cells = []
        for init in args.inits:
            runs = [json.load(open(_cell(args, task, init, s))) for s in args.seeds if osp.isfile(_cell(args, task,
                                                                                                       init, s))]
            cpu += sum(r['cpu_s'] for r in runs)
            values = [next(v for k, v in r['metrics'].items() if k == metric or k.endswith('/' + metric))
                      for r in runs]
            if not values:
                cells.append('–')
                continue
            spread = f' ± {np.std(values, ddof=1):.3f}' if len(values) > 1 else ''
            cells.append(f'{np.mean(values):.3f}{spread}')
        lines.append(f'| {task} ({metric} {"↑" if higher else "↓"}) | ' + ' | '.join(cells) + ' |')
    lines.append(f'\nSeeds {args.seeds}; CPU time {cpu / 60:.0f} CPU-minutes.')
    text = '\n'.join(lines)
    print(text)
    return text


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.job:
        task, init, seed = args.job.split(':')
        run_job(args, task, init, int(seed))
        return
    if not args.report:
        schedule(args)
    report(args)


if __name__ == '__main__':
    main()
