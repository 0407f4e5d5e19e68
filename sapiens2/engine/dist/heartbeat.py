"""Heartbeats of the ranks through the process group's store, to name the rank that stopped responding.

A rank that is stopped (SIGSTOP, Ctrl-Z), deadlocked or swapped out makes every other rank wait in its next
collective until the process-group timeout, then fail with an error that names no rank. Here every rank runs a daemon
thread that adds 1 to its counter in the store every ``interval`` seconds; the threads of a stopped process stop too,
while those of a rank that is only slow (saving a checkpoint, evaluating) keep counting. Rank 0's thread also warns
once a rank's counter has not moved for ``warn_after`` seconds (unless that rank exited normally), so a hang shows
in the log long before the timeout; :func:`name_unresponsive_ranks` turns a collective's timeout into a
:class:`RankTimeoutError` naming the ranks whose counters no longer move.
"""
import atexit
import contextlib
import logging
import os
import socket
import threading
import time
from typing import Iterator, List, Optional

import torch.distributed as torch_dist
from mmengine.logging import print_log

from .agent_watchdog import stop_if_orphaned

COUNTER_KEY = 'sapiens2/heartbeat/{}'
WHO_KEY = 'sapiens2/rank/{}'
DONE_KEY = 'sapiens2/exited/{}'
#: Words of the errors gloo, NCCL and the store raise when a peer does not answer or has gone.
PEER_FAILURE_WORDS = ('timed out', 'timeout', 'connection closed', 'connection reset', 'broken pipe')


class RankTimeoutError(TimeoutError):
    """A collective did not complete because some rank stopped responding; the message names it."""


class Heartbeat:
    """The heartbeat of this rank (and, on rank 0, the watch over the others) in the store of the process group.

    Args:
        store: The process group's store (``torch.distributed`` key-value store).
        rank: This process's rank.
        world_size: Number of ranks.
        timeout: The process-group timeout in seconds (named in the messages).
        interval: Seconds between two beats (default: a tenth of the timeout, within 1..10 s).
        warn_after: Seconds of silence after which rank 0 warns about a rank (default: 6 intervals).
    """

    def __init__(self, store, rank: int, world_size: int, timeout: float, interval: Optional[float] = None,
                 warn_after: Optional[float] = None) -> None:
        self.store = store
        self.rank = rank
        self.world_size = world_size
        self.timeout = timeout
        self.interval = interval or min(max(timeout / 10, 1.0), 10.0)
        self.warn_after = warn_after or 6 * self.interval
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._last_counts: List[int] = []
        self._last_change: List[float] = []
        self._warned: set = set()

    def start(self) -> 'Heartbeat':
        """Publish who this rank is (pid@host) and start beating."""
        self.store.set(WHO_KEY.format(self.rank), f'pid {os.getpid()} on {socket.gethostname()}')
        self.store.add(COUNTER_KEY.format(self.rank), 1)
        self._thread = threading.Thread(target=self._run, name='sapiens2-heartbeat', daemon=True)
        self._thread.start()
        atexit.register(self.exit)
        return self

    def stop(self) -> None:
        self._stop.set()

    def exit(self) -> None:
        """Stop, and record that this rank exited normally (rank 0 then does not warn about its silence); waits at
        most 2 s, since the process hosting the store may be gone or stopped."""
        self.stop()

        def record() -> None:
            with contextlib.suppress(Exception):
                self.store.set(DONE_KEY.format(self.rank), '1')

        thread = threading.Thread(target=record, daemon=True)
        thread.start()
        thread.join(2)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.store.add(COUNTER_KEY.format(self.rank), 1)
                if self.rank == 0:
                    self._watch()
            except Exception:  # noqa: BLE001  (the store is gone: the process group was destroyed or failed)
                return

    def _watch(self) -> None:
        counts, now = self.counts(), time.monotonic()
        if not self._last_counts:
            self._last_counts, self._last_change = counts, [now] * self.world_size
            return
        for rank, (count, last) in enumerate(zip(counts, self._last_counts)):
            if count == last and self.store.check([DONE_KEY.format(rank)]):
                continue  # exited normally (its work is done)
            if count != last:
                self._last_change[rank] = now
                if rank in self._warned:
                    self._warned.discard(rank)
                    print_log(f'rank {rank} responds again.', logger='current', level=logging.WARNING)
            elif now - self._last_change[rank] > self.warn_after and rank not in self._warned:
                self._warned.add(rank)
                silent = now - self._last_change[rank]
                print_log(f'rank {rank} ({self.who(rank)}) has sent no heartbeat for {silent:.0f} s: it is stopped '
                          '(SIGSTOP, Ctrl-Z), hung or swapped out. The other ranks wait for it '
                          f'until the process-group timeout ({self.timeout:.0f} s, env_cfg.dist_cfg.timeout), then '
                          'stop.', logger='current', level=logging.WARNING)
        self._last_counts = counts

    def counts(self) -> List[int]:
        """The heartbeat counter of every rank."""
        return [int(self.store.add(COUNTER_KEY.format(rank), 0)) for rank in range(self.world_size)]

    def who(self, rank: int) -> str:
        """'pid <pid> on <host>' of ``rank``."""
        key = WHO_KEY.format(rank)
        return self.store.get(key).decode() if self.store.check([key]) else 'pid unknown'

    def unresponsive(self) -> List[int]:
        """The other ranks whose counters do not move over 2.5 intervals."""
        before = self.counts()
        time.sleep(2.5 * self.interval)
        after = self.counts()
        return [rank for rank in range(self.world_size) if rank != self.rank and after[rank] == before[rank]]


_HEARTBEAT: Optional[Heartbeat] = None


def start_heartbeat(timeout: float, interval: Optional[float] = None) -> Optional[Heartbeat]:
    """Start this rank's :class:`Heartbeat` in the default process group's store (once; None without a group)."""
    global _HEARTBEAT
    if not torch_dist.is_initialized() or torch_dist.get_world_size() < 2:
        return None
    if _HEARTBEAT is None or _HEARTBEAT._stop.is_set():
        store = torch_dist.distributed_c10d._get_default_store()
        _HEARTBEAT = Heartbeat(store, torch_dist.get_rank(), torch_dist.get_world_size(), timeout, interval).start()
    return _HEARTBEAT


def stop_heartbeat() -> None:
    """Stop this rank's heartbeat (before destroying the process group)."""
    global _HEARTBEAT
    if _HEARTBEAT is not None:
        _HEARTBEAT.stop()
        _HEARTBEAT = None


def describe_peer_failure(err: BaseException) -> Optional[str]:
    """For a collective that failed because a peer did not answer (or went away), a message naming the ranks that
    stopped responding; None for any other error or without a heartbeat."""
    heartbeat = _HEARTBEAT
    if heartbeat is None or not any(word in str(err).lower() for word in PEER_FAILURE_WORDS):
        return None
    result: dict = {}

    def diagnose() -> None:  # in a thread: a stopped rank may host the store, whose calls would then block
        ranks = heartbeat.unresponsive()
        result['ranks'] = [(rank, heartbeat.who(rank)) for rank in ranks]

    thread = threading.Thread(target=diagnose, daemon=True)
    thread.start()
    thread.join(3 * heartbeat.interval + 10)
    me = f'rank {heartbeat.rank} of {heartbeat.world_size} (pid {os.getpid()})'
    advice = (f'If the ranks are only slow (a long checkpoint save or evaluation on one rank), raise '
              f'env_cfg.dist_cfg.timeout (seconds, now {heartbeat.timeout:.0f}). Original error: {err}')
    if 'ranks' not in result:
        return (f'{me}: a collective operation failed ({type(err).__name__}) and the store of the process group '
                f'(MASTER_ADDR:MASTER_PORT) does not answer: the process hosting it (rank 0 or the launcher) is '
                f'probably stopped or gone. {advice}')
    if not result['ranks']:
        return None
    names = ', '.join(f'rank {rank} ({who})' for rank, who in result['ranks'])
    return (f'{me}: a collective operation did not complete because {names} stopped responding: its heartbeat no '
            'longer moves (the process is stopped by SIGSTOP or Ctrl-Z, hung, swapped out or gone). The job stops; '
            'end that process if it remains (a stopped process ignores SIGTERM: kill -KILL <pid>), then restart with '
            f'--resume to continue from the last checkpoint. {advice}')


@contextlib.contextmanager
def name_unresponsive_ranks() -> Iterator[None]:
    """Within the block, a collective's timeout (or lost connection) caused by a rank that stopped responding is
    raised as :class:`RankTimeoutError` naming that rank (``tools/train.py`` and ``tools/test.py`` run in it); a rank
    whose torchrun agent is gone stops with the agent's line instead (:func:`.agent_watchdog.stop_if_orphaned`)."""
    try:
        yield
    except RuntimeError as err:
        stop_if_orphaned()
        message = describe_peer_failure(err)
        if message is None:
            raise
        raise RankTimeoutError(message) from err
