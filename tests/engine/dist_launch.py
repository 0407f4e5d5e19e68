"""Helpers for the engine tests that run tools/train.py, tools/test.py and the dist_*.sh launchers as subprocesses."""
import os
import runpy
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as torch_dist

REPO = Path(__file__).resolve().parents[2]
TOY_CONFIG = REPO / 'tests/engine/configs/dist_toy.py'
TOY_FSDP_CONFIG = REPO / 'tests/engine/configs/dist_toy_fsdp.py'
TIMEOUT_S = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture
def single_rank_env(monkeypatch):
    """torchrun's variables for a world of one process; destroys the process group afterwards."""
    for key, value in dict(RANK='0', LOCAL_RANK='0', WORLD_SIZE='1', MASTER_ADDR='127.0.0.1',
                           MASTER_PORT=str(free_port())).items():
        monkeypatch.setenv(key, value)
    yield
    if torch_dist.is_initialized():
        torch_dist.destroy_process_group()


@pytest.fixture
def gloo_world(single_rank_env):
    """An initialised gloo process group of one process (this one)."""
    torch_dist.init_process_group('gloo')


def build_toy_runner(work_dir: Path, config: Path = TOY_CONFIG, launcher: str = 'none', **options):
    """The runner tools/train.py would build for ``config`` with ``--cfg-options`` ``options``, in this process."""
    from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
    options.setdefault('experiment_name', f'{Path(config).stem}_{Path(work_dir).name}')
    cfg = load_config(str(config), options)
    return build_runner(prepare_train_config(cfg, str(config), str(work_dir), launcher=launcher))


def child_config(path: Path, base: Path, body: str = '') -> Path:
    """Write a config at ``path`` inheriting ``base`` plus the python ``body``; return its path."""
    path.write_text(f"_base_ = ['{base}']\n{body}\n")
    return path


def _env() -> dict:
    return dict(os.environ, PYTHON=sys.executable, PORT=str(free_port()), OMP_NUM_THREADS='1', PYTHONPATH=str(REPO))


def run(cmd: list, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``cmd`` from the repo root; on an unexpected exit code fail with the tail of its output."""
    proc = subprocess.run([str(c) for c in cmd], cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    if check and proc.returncode != 0:
        raise AssertionError(f'{cmd} exited with {proc.returncode}:\n{(proc.stdout + proc.stderr)[-4000:]}')
    return proc


def train(config: Path, work_dir: Path, gpus: int = 1, *args, check: bool = True) -> subprocess.CompletedProcess:
    """tools/train.py (``gpus == 1``) or tools/dist_train.sh with ``gpus`` processes."""
    if gpus == 1:
        return run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir, *args], check)
    return run(['bash', 'tools/dist_train.sh', config, gpus, '--work-dir', work_dir, *args], check)


def evaluate(config: Path, checkpoint: Path, work_dir: Path, gpus: int = 1, *args) -> subprocess.CompletedProcess:
    """tools/test.py (``gpus == 1``) or tools/dist_test.sh with ``gpus`` processes."""
    if gpus == 1:
        return run([sys.executable, 'tools/test.py', config, checkpoint, '--work-dir', work_dir, *args])
    return run(['bash', 'tools/dist_test.sh', config, checkpoint, gpus, '--work-dir', work_dir, *args])


def weights(checkpoint: Path) -> dict:
    """The model state dict of an MMEngine checkpoint."""
    return torch.load(checkpoint, map_location='cpu', weights_only=False)['state_dict']


def max_abs_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max((a[k].float() - b[k].float()).abs().max().item() for k in a)


def run_tool(monkeypatch, script: str, *args) -> int:
    """Run ``tools/<script> args`` in this process, as from a shell (``SAPIENS2_DEBUG`` unset); its exit code."""
    monkeypatch.setattr(sys, 'argv', [script, *map(str, args)])
    monkeypatch.delenv('SAPIENS2_DEBUG', raising=False)
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(REPO / 'tools' / script), run_name='__main__')
    return exit_.value.code
