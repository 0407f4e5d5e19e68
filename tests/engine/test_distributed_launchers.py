"""tools/dist_train.sh, dist_test.sh, slurm_train.sh, dist_infer.sh and slurm_infer.sh build the right torchrun /
srun command lines."""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def echo(tmp_path) -> Path:
    """An executable that prints its arguments, one per line (stands in for python / srun)."""
    path = tmp_path / 'echo_args'
    path.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    path.chmod(0o755)
    return path


def _run(script: str, *args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(['bash', f'tools/{script}', *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=30)


def test_dist_train_multi_node_command(echo):
    proc = _run('dist_train.sh', 'cfg.py', '8', '--amp', PYTHON=str(echo), NNODES='2', NODE_RANK='1',
                MASTER_ADDR='10.0.0.1', PORT='1234')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split('\n')[:-1] == [
        '-m', 'torch.distributed.run', '--nnodes=2', '--node_rank=1', '--master_addr=10.0.0.1', '--nproc_per_node=8',
        '--master_port=1234', f'{REPO}/tools/train.py', 'cfg.py', '--launcher', 'pytorch', '--amp'
    ]


def test_dist_test_defaults(echo):
    proc = _run('dist_test.sh', 'cfg.py', 'ckpt.pth', '2', '--work-dir', 'w', PYTHON=str(echo))
    args = proc.stdout.split('\n')[:-1]
    assert '--nnodes=1' in args and '--master_addr=127.0.0.1' in args and '--master_port=29500' in args
    assert args[-6:] == ['cfg.py', 'ckpt.pth', '--launcher', 'pytorch', '--work-dir', 'w']


def test_slurm_train_command(echo, tmp_path):
    (tmp_path / 'srun').symlink_to(echo)
    proc = _run('slurm_train.sh', 'gpu', 'job', 'cfg.py', '--resume', PATH=f'{tmp_path}:{os.environ["PATH"]}',
                GPUS='16', PYTHON='python3')
    args = proc.stdout.split('\n')[:-1]
    assert args[:2] == ['-p', 'gpu'] and '--ntasks=16' in args and '--ntasks-per-node=8' in args
    assert args[-5:] == [f'{REPO}/tools/train.py', 'cfg.py', '--launcher', 'slurm', '--resume']


def test_dist_infer_command(echo):
    proc = _run('dist_infer.sh', '2', 'photos/', '--task', 'pose', '--out', 'labels/', PYTHON=str(echo), NNODES='2',
                NODE_RANK='1', MASTER_ADDR='10.0.0.1', PORT='1234')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split('\n')[:-1] == [
        '-m', 'torch.distributed.run', '--nnodes=2', '--node_rank=1', '--master_addr=10.0.0.1', '--nproc_per_node=2',
        '--master_port=1234', f'{REPO}/tools/infer.py', 'photos/', '--task', 'pose', '--out', 'labels/', '--launcher',
        'pytorch']


def test_dist_infer_refuses_a_process_count_that_is_no_number(echo):
    proc = _run('dist_infer.sh', 'photos/', '--out', 'labels/', PYTHON=str(echo))
    assert proc.returncode == 2 and "GPUS is 'photos/'" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_slurm_infer_command(echo, tmp_path):
    (tmp_path / 'srun').symlink_to(echo)
    proc = _run('slurm_infer.sh', 'gpu', 'label', 'list.txt', '--task', 'pose', '--out', 'o/',
                PATH=f'{tmp_path}:{os.environ["PATH"]}', GPUS='16', PYTHON='python3')
    args = proc.stdout.split('\n')[:-1]
    assert args[:2] == ['-p', 'gpu'] and '--ntasks=16' in args and '--kill-on-bad-exit=1' in args
    assert args[-8:] == [f'{REPO}/tools/infer.py', 'list.txt', '--task', 'pose', '--out', 'o/', '--launcher', 'slurm']


@pytest.mark.parametrize('script', ['dist_train.sh', 'dist_test.sh', 'slurm_train.sh', 'dist_infer.sh',
                                    'slurm_infer.sh'])
def test_launchers_print_usage_on_missing_arguments(script):
    proc = _run(script, 'only_one_arg')
    assert proc.returncode == 2 and 'usage:' in proc.stderr



def _marker(path: Path, name: str) -> Path:
    """An executable that prints ``name`` and then its arguments, one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" {name} "$@"\n')
    path.chmod(0o755)
    return path


@pytest.mark.parametrize('script', ['dist_train.sh', 'dist_test.sh', 'slurm_train.sh', 'slurm_infer.sh'])
def test_launchers_pick_python_from_env_then_venv_then_path(script, tmp_path):
    """$PYTHON wins; else the checkout's own .venv/bin/python (beside tools/); else python on the PATH."""
    checkout = tmp_path / 'checkout'
    (checkout / 'tools').mkdir(parents=True)
    for name in (script, 'launch_common.sh'):  # the script and the helper it sources
        (checkout / 'tools' / name).write_text((REPO / 'tools' / name).read_text())
    bin_dir = tmp_path / 'bin'
    _marker(bin_dir / 'python', 'path-python')
    env_python = _marker(bin_dir / 'chosen', 'env-python')
    venv_python = checkout / '.venv' / 'bin' / 'python'
    _marker(bin_dir / 'srun', 'srun')
    env = {k: v for k, v in os.environ.items() if k != 'PYTHON'}
    env['PATH'] = f'{bin_dir}:{env["PATH"]}'

    def python_used(**extra) -> str:
        """The marker name of the python that ran (torchrun scripts) or was handed to srun (its path)."""
        proc = subprocess.run(['bash', str(checkout / 'tools' / script), 'a', '2', '2', 'd'],
                              capture_output=True, text=True, env={**env, **extra}, timeout=30)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.split('\n')
        if not script.startswith('slurm_'):
            return out[0]
        python = out[out.index('-u') - 1]
        return {'python': 'path-python', str(env_python): 'env-python', str(venv_python): 'venv-python'}[python]

    assert python_used() == 'path-python'
    _marker(venv_python, 'venv-python')
    assert python_used() == 'venv-python'
    assert python_used(PYTHON=str(env_python)) == 'env-python'
