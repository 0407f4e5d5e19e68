"""The folder lock: one holder at a time across processes and threads, a waiter told who holds it, no lock file left,
and a killed holder never blocks the next one."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from sapiens2.utils.file_lock import exclusive, lock_path, locked_update

REPO = Path(__file__).resolve().parents[2]
HOLD = ('import sys, time, sapiens2_entry\n'
        'from sapiens2.utils.file_lock import exclusive\n'
        'with exclusive(sys.argv[1]):\n'
        '    print("held", flush=True)\n'
        '    time.sleep(float(sys.argv[2]))\n')


def _holder(lock, seconds):
    """A process holding ``lock`` for ``seconds``, once it says so."""
    process = subprocess.Popen([sys.executable, '-c', HOLD, str(lock), str(seconds)], stdout=subprocess.PIPE,
                               text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert process.stdout.readline().strip() == 'held'
    return process


def test_a_second_holder_waits_for_the_first_process_and_is_told_its_pid(tmp_path):
    lock = tmp_path / '.run.lock'
    holder = _holder(lock, 1.0)
    waits = []
    start = time.monotonic()
    with exclusive(str(lock), on_wait=waits.append):
        waited = time.monotonic() - start
    holder.wait(30)
    assert waits == [f'pid {holder.pid}'] and waited > 0.3
    assert not lock.exists()


def test_a_killed_holder_releases_the_lock(tmp_path):
    lock = tmp_path / '.run.lock'
    holder = _holder(lock, 60)
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)
    assert lock.exists()  # left by the killed holder, taken and removed by the next one
    with exclusive(str(lock)):
        pass
    assert not lock.exists()


def test_threads_take_the_lock_one_at_a_time(tmp_path):
    inside, overlaps = [], []

    def work():
        for _ in range(20):
            with exclusive(str(tmp_path / '.l.lock')):
                inside.append(1)
                overlaps.append(len(inside))
                time.sleep(0.001)
                inside.pop()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [1] * 60


def test_a_read_modify_write_lock_lies_beside_its_file_hidden(tmp_path):
    assert lock_path(str(tmp_path / 'people/coco_results.json')) == str(tmp_path / 'people/.coco_results.json.lock')
    with locked_update(str(tmp_path / 'new/x.json')):
        assert (tmp_path / 'new/.x.json.lock').exists()
    assert os.listdir(tmp_path / 'new') == []
