"""Ranks stop when the torchrun agent that launched them is gone, instead of training on as orphans.

torchrun's agent ends its workers when it is interrupted or terminated, but a SIGKILL (or an out-of-memory kill) of
the agent itself leaves the ranks running with nobody to restart or stop them. Each rank started by torchrun
(``TORCHELASTIC_RUN_ID`` in its environment) runs a daemon thread that checks every ``interval`` seconds whether its
parent process is still the agent (an orphan is re-parented, so ``os.getppid()`` changes). When it is not, the
thread logs one line saying why, waits for a checkpoint being written to be complete (atomic writes,
:mod:`sapiens2.utils.atomic_save`), and ends the process with exit code 1; the last complete checkpoint is kept.
A collective that fails before the thread's next check (the other orphaned rank stopped first) ends the rank the
same way (:func:`stop_if_orphaned`, called by :func:`sapiens2.engine.dist.heartbeat.name_unresponsive_ranks`).
"""
import logging
import os
import sys
import threading
from typing import Optional

from mmengine.logging import print_log

from sapiens2.utils.atomic_save import WRITE_LOCK

#: Seconds between two checks of the parent process.
INTERVAL_S = 2.0
#: Seconds an orphaned rank waits for a checkpoint write in progress before it exits anyway (an interrupted write
#: leaves the previous file intact).
SAVE_GRACE_S = 40.0
EXIT_CODE = 1


def launched_by_torchrun() -> bool:
    """Whether this process is a worker of torchrun's elastic agent."""
    return bool(os.environ.get('TORCHELASTIC_RUN_ID'))


def agent_gone_message(agent_pid: int) -> str:
    rank, world = os.environ.get('RANK', '?'), os.environ.get('WORLD_SIZE', '?')
    return (f'rank {rank} of {world} (pid {os.getpid()}): the torchrun agent that launched it (pid {agent_pid}) is '
            'gone (killed?), so no process can stop or restart the ranks; this rank stops. The last complete '
            'checkpoint of the work dir is intact: relaunch with --resume to continue from it.')


class AgentWatchdog:
    """The thread that ends this rank once its parent (the agent, ``os.getppid()`` at start) is gone."""

    def __init__(self, interval: float = INTERVAL_S, save_grace: float = SAVE_GRACE_S) -> None:
        self.agent_pid = os.getppid()
        self.interval, self.save_grace = interval, save_grace
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='sapiens2-agent-watchdog', daemon=True)

    def start(self) -> 'AgentWatchdog':
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def stop_if_orphaned(self) -> None:
        """End this rank (one line, then exit code 1) if its parent is no longer the agent."""
        if os.getppid() != self.agent_pid:
            self._exit()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.stop_if_orphaned()

    def _exit(self) -> None:
        try:  # rank 0 logs to the console and the run's log file; MMEngine's other ranks log errors only
            if os.environ.get('RANK', '0') == '0':
                print_log(agent_gone_message(self.agent_pid), logger='current', level=logging.WARNING)
            else:
                print(agent_gone_message(self.agent_pid), file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001  (the agent's end of a pipe may be closed: stopping matters more)
            pass
        WRITE_LOCK.acquire(timeout=self.save_grace)  # held while a checkpoint is written: let it complete
        os._exit(EXIT_CODE)


_WATCHDOG: Optional[AgentWatchdog] = None


def stop_if_orphaned() -> None:
    """End this rank now, as its watchdog would, if its agent is gone: a collective that fails because another
    orphaned rank stopped first has that cause, not the peer's silence."""
    if _WATCHDOG is not None:
        _WATCHDOG.stop_if_orphaned()


def watch_agent() -> Optional[AgentWatchdog]:
    """Start this rank's :class:`AgentWatchdog` when torchrun launched it (once); None otherwise."""
    global _WATCHDOG
    if _WATCHDOG is None and launched_by_torchrun():
        _WATCHDOG = AgentWatchdog().start()
    return _WATCHDOG
