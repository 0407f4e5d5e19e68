"""Helpers of the own-layout training tests: convert SynthHumans, train a few iterations with tools/train.py and
evaluate with tools/test.py, in subprocesses as a user would."""
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600
ITERS = 2
SUBSET = ['--num-train', '12', '--num-val', '4']
# A few iterations at batch 4, no validation during training (tools/test.py evaluates), the last checkpoint kept.
SHORT = [f'train_cfg.max_iters={ITERS}', 'train_cfg.val_interval=1000', 'train_dataloader.batch_size=4',
         'val_dataloader.batch_size=4', 'test_dataloader.batch_size=4', 'default_hooks.logger.interval=1']


def run(args: List[str], cwd: Path = REPO) -> subprocess.CompletedProcess:
    """Run a command of the repository (a tool path is resolved from the repository root) with one thread."""
    env = dict(os.environ, OMP_NUM_THREADS='1', PYTHONPATH=str(REPO))
    if args[0].endswith('.py'):
        args = [sys.executable, str(REPO / args[0])] + args[1:]
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, f'{" ".join(args)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}'
    return proc


def train_and_test(config: str, work_dir: Path, options: List[str], test_args: Optional[List[str]] = None,
                   cwd: Path = REPO) -> dict:
    """Train ``config`` for :data:`ITERS` iterations, evaluate its last checkpoint; return the checkpoint path and the
    test metrics."""
    run(['tools/train.py', config, '--work-dir', str(work_dir), '--cfg-options', *SHORT, *options], cwd)
    checkpoint = work_dir / f'iter_{ITERS}.pth'
    test_dir = work_dir / 'test'
    run(['tools/test.py', config, str(checkpoint), '--work-dir', str(test_dir), *(test_args or []),
         '--cfg-options', *SHORT, *options], cwd)
    return dict(checkpoint=checkpoint, metrics=read_test_metrics(test_dir))


def read_test_metrics(work_dir: Path) -> dict:
    """The metrics MMEngine logged for the test run (``<work_dir>/<timestamp>/<timestamp>.json``)."""
    logs = sorted(work_dir.glob('*/*.json'))
    assert logs, f'no metrics under {work_dir}'
    return json.loads(logs[-1].read_text().splitlines()[-1])


