"""Killing the torchrun agent (SIGKILL) stops its ranks with one line saying why, instead of leaving them training as
orphans, and the checkpoints of the work dir stay complete (gloo, two CPU processes, tools/dist_train.sh)."""
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.engine.dist_launch import REPO, TOY_CONFIG, _env, child_config, weights

STOP_WITHIN_S = 60


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (an orphan's zombie waits for whoever adopted it to reap it)."""
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] not in 'ZX'
    except (FileNotFoundError, IndexError):
        return False


def _ranks_of(agent: int) -> list:
    """The tools/train.py processes whose parent is ``agent``."""
    ranks = []
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            ppid = int(stat.read_text().rsplit(')', 1)[1].split()[1])
            cmdline = (stat.parent / 'cmdline').read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == agent and b'tools/train.py' in cmdline:
            ranks.append(int(stat.parent.name))
    return ranks


@pytest.mark.slow
def test_killing_the_agent_stops_both_ranks_with_their_checkpoints_complete(tmp_path):
    config = child_config(tmp_path / 'long.py', TOY_CONFIG, 'train_cfg = dict(max_iters=10**9)\n'
                          'default_hooks = dict(logger=dict(interval=10**6), checkpoint=dict(interval=10, '
                          'max_keep_ckpts=2))')
    work_dir, log = tmp_path / 'w', tmp_path / 'out.log'
    with open(log, 'w') as out:  # dist_train.sh execs torchrun: this pid is the agent's
        agent = subprocess.Popen(['bash', 'tools/dist_train.sh', str(config), '2', '--work-dir', str(work_dir)],
                                 cwd=REPO, env=_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    ranks = []
    try:
        deadline = time.monotonic() + 240
        while not list(work_dir.glob('iter_*.pth')):
            assert agent.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        ranks = _ranks_of(agent.pid)
        assert len(ranks) == 2, ranks
        agent.kill()
        agent.wait()
        deadline = time.monotonic() + STOP_WITHIN_S
        while any(map(_running, ranks)) and time.monotonic() < deadline:
            time.sleep(0.5)
        orphans = [pid for pid in ranks if _running(pid)]
    finally:
        for pid in [*(ranks or _ranks_of(agent.pid)), agent.pid]:  # torchrun starts each rank in its own session
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    text = log.read_text()
    assert not orphans, f'ranks {orphans} still run {STOP_WITHIN_S} s after the agent was killed:\n{text[-3000:]}'
    named = re.findall(rf'rank (\d) of 2 \(pid (\d+)\): the torchrun agent that launched it \(pid {agent.pid}\) is '
                       r'gone .* relaunch with --resume', text)
    assert sorted(rank for rank, _ in named) == ['0', '1'], text[-3000:]
    assert {int(pid) for _, pid in named} == set(ranks)
    checkpoints = sorted(work_dir.glob('iter_*.pth'))
    assert checkpoints and not list(work_dir.glob('.*.tmp'))
    for checkpoint in checkpoints:
        weights(checkpoint)  # complete and loadable
