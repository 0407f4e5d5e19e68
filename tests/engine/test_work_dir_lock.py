"""One live training run per work directory (sapiens2/engine/work_dir.py): a second run fails at start naming the
first one's pid and writes nothing there; the lock dies with its process, so a killed run leaves nothing stale."""
import fcntl
import os
import socket
import subprocess
import sys

import pytest

from sapiens2.engine import work_dir as work_dir_module
from sapiens2.engine.work_dir import LOCK_NAME, WorkDirInUseError, lock_work_dir, unlock_work_dir
from tests.engine.dist_launch import TOY_CONFIG, run_tool

# Another process taking the lock with sapiens2's own function (its module alone: no torch import to wait for).
HOLD = ('import importlib.util, sys, time\n'
        "spec = importlib.util.spec_from_file_location('work_dir', sys.argv[1])\n"
        'module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n'
        "module.lock_work_dir(sys.argv[2])\nprint('locked', flush=True)\ntime.sleep(600)\n")


def _contents(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob('*')) if p.is_file()}


def test_a_second_run_fails_naming_the_live_one_and_a_killed_run_leaves_nothing_stale(tmp_path, monkeypatch,
                                                                                        capsys):
    work_dir = tmp_path / 'work'
    holder = subprocess.Popen([sys.executable, '-c', HOLD, work_dir_module.__file__, str(work_dir)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == 'locked\n'
        before = _contents(work_dir)
        code = run_tool(monkeypatch, 'train.py', TOY_CONFIG, '--work-dir', work_dir)
        assert _contents(work_dir) == before  # nothing written (no log folder, no config dump, no checkpoint)
    finally:
        holder.kill()  # SIGKILL: the kernel releases the lock
        holder.wait()
    err = capsys.readouterr().err
    assert code == 1 and 'Traceback' not in err, err[-3000:]
    error = err.strip().splitlines()[-1]
    assert error.startswith('train.py: error: WorkDirInUseError: --work-dir ')
    assert f'in use by another training run (pid {holder.pid} on ' in error and str(work_dir / LOCK_NAME) in error
    try:
        assert run_tool(monkeypatch, 'train.py', TOY_CONFIG, '--work-dir', work_dir, '--cfg-options',
                        'train_cfg.max_iters=1') == 0
    finally:
        unlock_work_dir(str(work_dir))
    assert (work_dir / 'iter_1.pth').is_file()
    assert (work_dir / LOCK_NAME).read_text() == f'pid {os.getpid()} on {socket.gethostname()}\n'


def test_a_held_lock_is_named_and_released_by_closing(tmp_path):
    work_dir = tmp_path / 'w'
    work_dir.mkdir()
    (work_dir / LOCK_NAME).write_text('pid 4242 on host-b\n')
    fd = os.open(work_dir / LOCK_NAME, os.O_RDWR)  # another open file: flock treats it as another holder
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        with pytest.raises(WorkDirInUseError, match=r'in use by another training run \(pid 4242 on host-b; lock '):
            lock_work_dir(str(work_dir))
        assert (work_dir / LOCK_NAME).read_text() == 'pid 4242 on host-b\n'
    finally:
        os.close(fd)
    path = lock_work_dir(str(work_dir))
    try:
        assert lock_work_dir(str(work_dir)) == path  # already held by this process
        assert open(path).read() == f'pid {os.getpid()} on {socket.gethostname()}\n'
    finally:
        unlock_work_dir(str(work_dir))
