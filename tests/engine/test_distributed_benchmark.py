"""benchmarks/train_step.py measures a config's training step (smoke test on the toy config)."""
import os
import re
import subprocess
import sys

import pytest

from tests.engine.dist_launch import REPO, TOY_CONFIG


@pytest.mark.slow
def test_train_step_benchmark_prints_figures():
    proc = subprocess.run([sys.executable, 'benchmarks/train_step.py', str(TOY_CONFIG), '--iters', '3', '--warmup',
                           '1'], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr
    row = re.search(r'dist_toy\.py\s+cpu\s+4\s+([\d.]+)\s+([\d.]+)%\s+(\d+)\s+(-?\d+)', proc.stdout)
    assert row, proc.stdout
    it_per_s, data_pct, peak_mib, _ = map(float, row.groups())
    assert it_per_s > 0 and 0 <= data_pct <= 100 and peak_mib > 0
