"""tools/misc/setup_env.sh: a disk too small for torch is said in one line before anything is installed."""
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_disk_too_small_for_torch_stops_before_anything_is_created(tmp_path):
    venv = tmp_path / 'not' / 'yet' / 'venv'
    env = dict(os.environ, VENV=str(venv), SAPIENS2_NEED_GB='1000000')
    run = subprocess.run(['bash', str(REPO / 'tools/misc/setup_env.sh')], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f'setup_env.sh: {venv} needs about 1000000 GiB'), run.stderr
    assert 'set VENV to a folder on a larger disk' in lines[0] and 'SAPIENS2_NEED_GB=N' in lines[0]
    assert not (tmp_path / 'not').exists()  # no venv, not even its folder
    assert '==>' not in run.stdout  # no step started


def test_a_misspelt_space_figure_is_one_line(tmp_path):
    env = dict(os.environ, VENV=str(tmp_path / 'venv'), SAPIENS2_NEED_GB='8GB')
    run = subprocess.run(['bash', str(REPO / 'tools/misc/setup_env.sh')], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1 and run.stderr.strip() == (
        "setup_env.sh: SAPIENS2_NEED_GB must be a whole number of GiB, got '8GB'")
    assert not (tmp_path / 'venv').exists()
