"""Checkpoints written through MMEngine's file backend are atomic: old file or new file, never a truncated one."""
import errno
import os
import signal
import socket
import subprocess
import sys

import pytest
import torch
from mmengine.fileio import get_file_backend
from mmengine.runner import save_checkpoint

from sapiens2.engine.work_dir_backend import AtomicLocalBackend
from sapiens2.utils import atomic_save
from sapiens2.utils.atomic_save import atomic_write_bytes


def test_local_paths_use_the_atomic_backend(tmp_path):
    assert isinstance(get_file_backend(str(tmp_path / 'x.pth')), AtomicLocalBackend)


def test_failed_commit_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / 'iter_1.pth'
    save_checkpoint(dict(state_dict=dict(w=torch.zeros(2))), str(path))

    def fail(src, dst):
        raise OSError('disk full')

    monkeypatch.setattr(os, 'replace', fail)
    with pytest.raises(OSError, match='disk full'):
        save_checkpoint(dict(state_dict=dict(w=torch.ones(2))), str(path))
    assert torch.equal(torch.load(path, weights_only=False)['state_dict']['w'], torch.zeros(2))
    assert os.listdir(tmp_path) == ['iter_1.pth']  # no temporary file left behind


def test_kill_while_writing_leaves_the_old_content(tmp_path):
    path = tmp_path / 'ckpt.pth'
    atomic_write_bytes(path, b'old')
    # The child runs the module file alone (not the whole sapiens2 package) and dies at the fsync before the commit.
    child = ('import os, runpy, signal, sys; write = runpy.run_path(sys.argv[2])["atomic_write_bytes"]; '
             'os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL); '
             'write(sys.argv[1], b"x" * 10_000_000)')
    proc = subprocess.run([sys.executable, '-c', child, str(path), atomic_save.__file__], timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == b'old'
    atomic_write_bytes(path, b'new')  # the next write cleans the dead writer's temporary file
    assert path.read_bytes() == b'new' and os.listdir(tmp_path) == ['ckpt.pth']


def test_put_text_is_atomic_too(tmp_path):
    backend = get_file_backend(str(tmp_path))
    backend.put_text('hello', tmp_path / 'sub' / 'a.txt')
    assert (tmp_path / 'sub' / 'a.txt').read_text() == 'hello'


def test_only_temporary_files_of_dead_writers_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'], capture_output=True, text=True)
    prefix = f'.ckpt.pth.{socket.gethostname()}.'
    live_tmp, dead_tmp = tmp_path / f'{prefix}{os.getppid()}.tmp', tmp_path / f'{prefix}{dead.stdout.strip()}.tmp'
    live_tmp.write_bytes(b'in progress')
    dead_tmp.write_bytes(b'abandoned')
    atomic_write_bytes(tmp_path / 'ckpt.pth', b'new')
    assert live_tmp.exists() and not dead_tmp.exists()


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs mounted at ``tmp_path / 'disk'`` (needs root and a kernel that allows it; else skipped)."""
    disk = tmp_path / 'disk'
    disk.mkdir()
    mounted = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f'cannot mount a tmpfs here: {mounted.stderr.decode().strip()}')
    try:
        yield disk
    finally:
        subprocess.run(['umount', str(disk)], check=True)


def test_full_disk_keeps_the_previous_checkpoint(small_disk):
    save_checkpoint(dict(state_dict=dict(w=torch.zeros(1000))), str(small_disk / 'iter_3.pth'))
    with pytest.raises(OSError, match=rf'No space left on device while writing {small_disk}/iter_6\.pth: it needs '
                       r'1\.1 MiB and .* free\. Nothing was replaced: no iter_6\.pth was written, and the newest '
                       r'complete checkpoint there is iter_3\.pth.*Free at least') as err:
        save_checkpoint(dict(state_dict=dict(w=torch.zeros(300_000))), str(small_disk / 'iter_6.pth'))
    assert err.value.errno == errno.ENOSPC
    assert os.listdir(small_disk) == ['iter_3.pth']
    assert torch.equal(torch.load(small_disk / 'iter_3.pth', weights_only=False)['state_dict']['w'], torch.zeros(1000))
