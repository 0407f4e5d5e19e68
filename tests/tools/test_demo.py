"""The main job end to end with a very short training run."""
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_demo_trains_evaluates_and_draws(synthhumans_root, tmp_path):
    work_dir = tmp_path / 'demo'
    proc = subprocess.run([sys.executable, 'tools/misc/demo.py', '--iters', '4', '--num-images', '2', '--work-dir',
                           str(work_dir), '--data-root', synthhumans_root], cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert 'metrics:' in proc.stdout and 'pictures:' in proc.stdout
    pictures = sorted((work_dir / 'infer' / 'pose').glob('*.png'))
    assert len(pictures) == 2
    assert (work_dir / 'infer' / 'pose' / 'heldout_predictions.json').is_file()
