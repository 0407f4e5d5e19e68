"""A rank whose collective fails after its torchrun agent is gone stops with the agent's line (another orphaned
rank that stopped first is the peer that broke the collective, not the cause)."""
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import os, sys
    from sapiens2.engine.dist import agent_watchdog
    from sapiens2.engine.dist.heartbeat import name_unresponsive_ranks
    watchdog = agent_watchdog._WATCHDOG = agent_watchdog.AgentWatchdog(interval=3600)
    if sys.argv[1] == 'orphaned':
        watchdog.agent_pid = -1  # not this process's parent: as after the agent was killed
    with name_unresponsive_ranks():
        raise RuntimeError('Connection closed by peer [127.0.0.1]:48781')
""")


def _child(state: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RANK='1', WORLD_SIZE='2')
    return subprocess.run([sys.executable, '-c', CHILD, state], env=env, capture_output=True, text=True, timeout=120)


def test_a_failed_collective_of_an_orphaned_rank_stops_it_with_the_agent_line():
    done = _child('orphaned')
    assert done.returncode == 1, done.stderr[-2000:]
    assert 'rank 1 of 2' in done.stderr and 'the torchrun agent that launched it (pid -1) is gone' in done.stderr
    assert 'relaunch with --resume' in done.stderr and 'Traceback' not in done.stderr


def test_a_failed_collective_with_the_agent_alive_keeps_its_error():
    done = _child('parented')
    assert done.returncode == 1 and 'RuntimeError: Connection closed by peer' in done.stderr
    assert 'torchrun agent' not in done.stderr
