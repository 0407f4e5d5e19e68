"""A frozen rank ends the job after the process-group timeout with an error naming it, instead of a silent hang
(gloo, two CPU processes); the heartbeat logic on a single-process store."""
import os
import signal
import subprocess
import time

import pytest
import torch.distributed as torch_dist

from sapiens2.engine.dist import DEFAULT_TIMEOUT_S, RankTimeoutError
from sapiens2.engine.dist import heartbeat as heartbeat_module
from sapiens2.engine.dist.heartbeat import Heartbeat, describe_peer_failure, name_unresponsive_ranks
from tests.engine.dist_launch import REPO, TOY_CONFIG, _env, child_config

TIMEOUT_S = 20


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_a_stopped_rank_ends_the_job_with_an_error_naming_it(tmp_path):
    pid_file = tmp_path / 'frozen.pid'
    config = child_config(tmp_path / 'freeze.py', TOY_CONFIG,
                          f"custom_hooks = [dict(type='DistToyFreezeHook', pid_file='{pid_file}')]\n"
                          f'env_cfg = dict(dist_cfg=dict(timeout={TIMEOUT_S}))')
    log = tmp_path / 'out.log'
    with open(log, 'w') as out:
        proc = subprocess.Popen(['bash', 'tools/dist_train.sh', str(config), '2', '--work-dir', str(tmp_path / 'w')],
                                cwd=REPO, env=_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    frozen = None
    try:
        deadline = time.monotonic() + 240
        while not pid_file.exists() or not pid_file.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        frozen, stopped_at = int(pid_file.read_text()), time.monotonic()
        while 'RankTimeoutError' not in log.read_text():
            assert proc.poll() is None and time.monotonic() < stopped_at + TIMEOUT_S + 60, log.read_text()[-3000:]
            time.sleep(0.5)
        waited = time.monotonic() - stopped_at
        os.kill(frozen, signal.SIGKILL)  # a stopped process ignores torchrun's SIGTERM until it is continued
        assert proc.wait(timeout=60) != 0
    finally:
        if frozen is not None and _alive(frozen):
            os.kill(frozen, signal.SIGCONT)
            os.kill(frozen, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    assert TIMEOUT_S - 1 < waited < TIMEOUT_S + 45
    assert f'rank 1 (pid {frozen} on ' in text and 'has sent no heartbeat' in text  # the warning before the timeout
    error = next(line for line in text.splitlines() if 'RankTimeoutError' in line)
    assert 'rank 0 of 2' in error and f'rank 1 (pid {frozen} on ' in error and 'stopped responding' in error
    assert 'env_cfg.dist_cfg.timeout' in error and 'Traceback' not in text.split('RankTimeoutError')[0][-2000:]


@pytest.fixture
def heartbeat(monkeypatch):
    """A Heartbeat of rank 0 in a world of 2 on an in-memory store; rank 1's counter moves only when told to."""
    store = torch_dist.HashStore()
    beat = Heartbeat(store, rank=0, world_size=2, timeout=30, interval=0.05)
    beat.start()
    store.set('sapiens2/rank/1', 'pid 4242 on host-b')
    monkeypatch.setattr(heartbeat_module, '_HEARTBEAT', beat)
    yield beat, store
    beat.stop()


def test_defaults_scale_with_the_timeout():
    beat = Heartbeat(torch_dist.HashStore(), 0, 2, timeout=DEFAULT_TIMEOUT_S)
    assert DEFAULT_TIMEOUT_S == 1800 and beat.interval == 10 and beat.warn_after == 60
    assert Heartbeat(torch_dist.HashStore(), 0, 2, timeout=5).interval == 1


def test_a_rank_whose_counter_stops_is_named(heartbeat):
    beat, _ = heartbeat
    assert beat.unresponsive() == [1]
    message = describe_peer_failure(RuntimeError('Timed out waiting 20000ms for recv operation to complete'))
    assert 'rank 0 of 2' in message and 'rank 1 (pid 4242 on host-b) stopped responding' in message


def test_a_rank_that_keeps_beating_is_not_blamed(heartbeat):
    beat, store = heartbeat
    with _beating(store, rank=1, interval=0.01):
        assert beat.unresponsive() == []
        assert describe_peer_failure(RuntimeError('Timed out waiting 20000ms for recv')) is None


def test_other_errors_pass_through_unchanged(heartbeat):
    with pytest.raises(RuntimeError, match='CUDA out of memory'):
        with name_unresponsive_ranks():
            raise RuntimeError('CUDA out of memory')
    with pytest.raises(RankTimeoutError, match='rank 1 .* stopped responding'):
        with name_unresponsive_ranks():
            raise RuntimeError('[gloo] Connection closed by peer')


def test_rank0_warns_about_a_silent_rank_and_when_it_is_back(heartbeat, monkeypatch):
    beat, store = heartbeat
    beat.warn_after = 0.2
    logged = []
    monkeypatch.setattr(heartbeat_module, 'print_log', lambda message, **kwargs: logged.append(message))
    deadline = time.monotonic() + 10
    while not logged and time.monotonic() < deadline:
        time.sleep(0.05)
    assert logged and 'rank 1 (pid 4242 on host-b) has sent no heartbeat' in logged[0]
    with _beating(store, rank=1, interval=0.01):
        while len(logged) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert logged[1] == 'rank 1 responds again.'


class _beating:
    """Context manager: a thread adds to ``rank``'s counter every ``interval`` seconds."""

    def __init__(self, store, rank: int, interval: float):
        import threading
        self.store, self.key, self.interval = store, f'sapiens2/heartbeat/{rank}', interval
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.wait(self.interval):
            self.store.add(self.key, 1)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def test_a_rank_that_exited_normally_is_not_reported(heartbeat, monkeypatch):
    beat, store = heartbeat
    beat.warn_after = 0.2
    logged = []
    monkeypatch.setattr(heartbeat_module, 'print_log', lambda message, **kwargs: logged.append(message))
    other = Heartbeat(store, rank=1, world_size=2, timeout=30, interval=0.05)
    other.exit()  # what rank 1 does at interpreter exit
    time.sleep(1.0)
    assert logged == []
