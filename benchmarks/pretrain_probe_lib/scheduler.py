"""The benchmark's jobs in priority order, run in parallel subprocesses (``--workers``) as their
dependencies finish."""
import os
import os.path as osp
import subprocess
import sys
import time

from . import DIAGNOSTICS, FINETUNE_RUNS, LAUNCHER, REFERENCES, ROOT, TASKS, VARIANTS
from .cells import data_roots, finetune_json, pretrain_json, probe_json, semantic_json


def _jobs(args) -> list[tuple[str, list[str], bool]]:
    """(job, dependencies, done) in priority order, so that a partial run is already a table: seed by seed (seed 0
    of random init, the references and every variant first), then the variants probed with fewer seeds
    (``variant_seeds``). Within a seed the probes of fixed features come first, then each variant's pretraining
    followed by its probe; the scheduler starts the first job whose dependencies are done, so one worker pretrains
    while the other probes."""
    s = args.setting
    planned = list(s.variants) or [v for v in VARIANTS if args.diagnostics or v not in DIAGNOSTICS]
    core = [v for v in planned if v not in s.variant_seeds]
    groups = [(seed, core, ['random'] + (list(REFERENCES) if seed in s.reference_seeds else [])) for seed in s.seeds]
    groups += [(seed, [v], []) for v, seeds in s.variant_seeds.items() if v in planned for seed in seeds]
    jobs = [('data', [], osp.isfile(osp.join(args.results, 'data.json')))]

    def probe(backbone: str, seed: int) -> tuple[str, list[str], bool]:
        deps = ['data'] + ([f'pretrain:{backbone}:{seed}'] if backbone in VARIANTS else [])
        features = ['pooled'] + (['cls'] if s.cls_probe and backbone not in REFERENCES else [])
        done = all(osp.isfile(probe_json(args, backbone, seed, t, b)) for t in TASKS for b in s.budgets) and all(
            osp.isfile(semantic_json(args, backbone, seed, f)) for f in features)
        return f'probe:{backbone}:{seed}', deps, done

    for seed, variants, fixed in groups:
        jobs += [probe(backbone, seed) for backbone in fixed]
        for variant in variants:
            jobs.append((f'pretrain:{variant}:{seed}', ['data'], osp.isfile(pretrain_json(args, variant, seed))))
            jobs.append(probe(variant, seed))
        for run in s.finetune if fixed else ():  # every seed of the main plan
            backbone = FINETUNE_RUNS[run]['backbone']
            jobs.append((f'finetune:{run}:{seed}', [f'pretrain:{backbone}:{seed}'] if backbone else ['data'],
                         osp.isfile(finetune_json(args, run, seed))))
    return jobs


def check_data(args) -> None:
    """Refuses to add cells to a results folder whose data were rendered by another SynthHumans renderer version
    (cells of two renderings would be mixed in one table)."""
    from sapiens2.datasets.synthhumans import RENDERER_VERSION
    from sapiens2.datasets.synthhumans.manifest import read_manifest
    if not osp.isfile(osp.join(args.results, 'data.json')):
        return
    for root in data_roots(args.setting):
        manifest = read_manifest(root)
        found = None if manifest is None else manifest.get('renderer_version')
        if found != RENDERER_VERSION:
            raise RuntimeError(
                f'the cells in {args.results} were computed on {root}, which is '
                f'{"missing" if manifest is None else f"rendered by SynthHumans renderer version {found}"}, but this '
                f'code renders version {RENDERER_VERSION}: move {args.results} away (or pass --results to a new '
                'folder) to recompute every cell on freshly rendered data.')


def schedule(args) -> None:
    check_data(args)
    jobs = _jobs(args)
    done = {name for name, _, finished in jobs if finished}
    pending = [(name, deps) for name, deps, finished in jobs if not finished]
    running: dict[int, tuple[str, subprocess.Popen]] = {}
    base = [sys.executable, LAUNCHER, '--results', args.results, '--work-dir', args.work_dir]
    base += ['--quick'] if args.setting.name == 'quick' else ['--setting', args.setting.name]
    threads = '1' if args.workers > 1 else '2'
    os.makedirs(args.work_dir, exist_ok=True)
    start = time.perf_counter()
    while pending or running:
        ready = [(n, d) for n, d in pending if all(x in done for x in d)]
        while ready and len(running) < args.workers:
            name, deps = ready.pop(0)
            pending.remove((name, deps))
            env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
            log = open(osp.join(args.work_dir, name.replace(':', '-') + '.job.log'), 'w')
            proc = subprocess.Popen(base + ['--job', name], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            running[proc.pid] = (name, proc)
            print(f'[{time.perf_counter() - start:7.0f} s] start {name}', flush=True)
        if not running:
            raise RuntimeError(f'jobs {[n for n, _ in pending]} wait for jobs that did not finish')
        pid, status = os.wait()
        if pid not in running:
            continue
        name, _ = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f'job {name} failed; see {osp.join(args.work_dir, name.replace(":", "-"))}.job.log')
        done.add(name)
        print(f'[{time.perf_counter() - start:7.0f} s] done  {name}', flush=True)
