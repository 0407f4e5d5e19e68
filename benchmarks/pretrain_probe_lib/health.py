"""``--health`` and ``--levers``: the health cells of the self-distillation (one pretraining from scratch per
lever, its teacher targets measured on held-out images) and the lever table."""
import glob
import os
import os.path as osp
import subprocess
import time

from . import (
    COMBINED,
    HEALTH_IMAGES,
    LEVER_MARKS,
    LEVER_ORDER,
    LEVERS,
    ROOT,
    _config,
    lever_name,
    lever_options,
    lever_weights,
    model_options,
)
from .cells import cpu_seconds, health_json, lever_checkpoint, lever_work_dir, read_json, write_json
from .jobs import ensure_data, pretrain_command, scalars
from .pretrainers import load_pretrainer, val_images
from .reports import update_docs


def job_health(args, lever: str, seed: int = 0) -> dict:
    """One health cell: pretrain the tiny model from scratch with the full objective changed by ``lever``, then
    measure the teacher targets on the held-out images (``health.target_health``); cached as JSON."""
    from sapiens2_pretrain.health import health_verdict, target_health, teacher_targets
    path = health_json(args, lever, seed)
    if osp.isfile(path):
        return read_json(path)
    ensure_data(args.setting)
    work_dir = lever_work_dir(args, lever, seed)
    command = pretrain_command(args, 'full', seed, work_dir=work_dir, weights=lever_weights(lever),
                               extra=tuple(lever_options(lever)))
    start, cpu = time.perf_counter(), cpu_seconds()
    os.makedirs(work_dir, exist_ok=True)
    with open(work_dir + '.log', 'w') as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    train_cpu = cpu_seconds() - cpu
    cfg = _config(model_options(f'lever-{lever}'))
    model = load_pretrainer(cfg, lever_checkpoint(args, lever, seed))
    _, x = val_images(args, min(HEALTH_IMAGES, args.setting.labeled['num_val']))
    health = target_health(teacher_targets(model, x))
    cell = dict(lever=lever, seed=seed, options=lever_options(lever), weights=lever_weights(lever),
                iters=args.setting.iters, num_images=int(x.shape[0]), health=health,
                verdict=health_verdict(health), train_cpu_s=train_cpu, cpu_s=cpu_seconds() - cpu,
                wall_s=time.perf_counter() - start, command=' '.join(c.replace(ROOT + os.sep, '') for c in command[1:]),
                log=scalars(work_dir))
    write_json(path, cell)
    return cell


def health_table(cells: list[dict]) -> str:
    """Markdown table: one row per cell with its three measures (✗ marks a fail), verdict and CPU time."""
    lines = ['| recipe | target entropy / log K (< 0.9) | prototypes used (≥ 0.25) | batch-mean entropy (> 0.5) | '
             'verdict | CPU-min |', '|---|---|---|---|---|---|']
    for name in list(LEVERS) + ['combined']:
        cell = next((c for c in cells if c['lever'] == name), None)
        title = lever_name(name)
        if cell is None:
            why = 'no lever passed to combine' if name == 'combined' and not COMBINED else 'time'
            lines.append(f'| {title} | not run ({why}) | | | | |')
            continue
        trained = bool(lever_weights(name)['dino'])  # without a DINO loss the head is never trained: no verdict
        marks = {r['name']: ('' if r['passed'] or not trained else ' ✗') for r in cell['verdict']}
        h = cell['health']
        failed = [r['name'] for r in cell['verdict'] if not r['passed']]
        verdict = ('pass' if not failed else 'fail (' + ', '.join(failed) + ')') if trained else \
            'none: no DINO loss, the head is untrained'
        lines.append(f'| {title} | {h["entropy"]:.3f}{marks["entropy"]} | '
                     f'{h["usage"]:.3f}{marks["usage"]} | {h["batch_entropy"]:.3f}{marks["batch_entropy"]} | '
                     f'{verdict} | {cell["cpu_s"] / 60:.1f} |')
    return '\n'.join(lines)


def run_health(args) -> None:
    from sapiens2_pretrain.health import format_verdict
    cell = job_health(args, args.lever)
    print(f'health check of {args.lever!r} ({cell["iters"]} iterations from scratch, {cell["num_images"]} held-out '
          f'images, {cell["cpu_s"] / 60:.1f} CPU-minutes):')
    print(format_verdict(cell['verdict']))
    failed = [r for r in cell['verdict'] if not r['passed']]
    if not lever_weights(args.lever)['dino']:
        print('verdict: none (no DINO loss: the head is untrained, so its targets say nothing)')
        return
    print('verdict: ' + ('PASS: the self-distillation learns' if not failed else
                         'FAIL: ' + '; '.join(f'{r["name"]}: {r["reason"]}' for r in failed)))


def run_levers(args) -> None:
    """Every lever cell in order (cached, resumes), then the table (into the docs for the full setting)."""
    names = list(LEVER_ORDER) + (['combined'] if COMBINED else [])
    for name in names:
        if not osp.isfile(health_json(args, name)):
            print(f'[{time.strftime("%H:%M:%S")}] lever {name}', flush=True)
        job_health(args, name)
    report_levers(args)


def report_levers(args) -> None:
    cells = [read_json(p) for p in sorted(glob.glob(osp.join(args.health_results, '*.json')))]
    text = health_table(cells)
    print(text)
    if args.docs:
        update_docs(args.docs, text, LEVER_MARKS)
