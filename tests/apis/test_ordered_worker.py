"""OrderedWorker: calls run in submission order on one background thread; errors reach the caller."""
import threading

import pytest

from sapiens2.apis.ordered_worker import OrderedWorker


def test_calls_run_in_order_off_the_calling_thread():
    seen, threads = [], set()
    worker = OrderedWorker(depth=2)
    for i in range(50):
        worker.submit(lambda i: (seen.append(i), threads.add(threading.get_ident())), i)
    worker.close()
    assert seen == list(range(50))
    assert threads and threading.get_ident() not in threads


def test_submit_blocks_at_depth_until_the_worker_takes_a_call():
    release, started = threading.Event(), threading.Event()
    worker = OrderedWorker(depth=1)
    worker.submit(lambda: (started.set(), release.wait(5)))
    assert started.wait(5)
    worker.submit(lambda: None)  # fills the queue
    blocked = threading.Thread(target=worker.submit, args=(lambda: None, ))
    blocked.start()
    blocked.join(0.2)
    assert blocked.is_alive()
    release.set()
    blocked.join(5)
    assert not blocked.is_alive()
    worker.close()


def test_an_error_is_raised_in_the_caller_and_later_calls_are_skipped():
    ran = []
    worker = OrderedWorker(depth=4)
    worker.submit(lambda: ran.append('first'))
    worker.submit(lambda: 1 / 0)
    worker.submit(lambda: ran.append('after the error'))
    with pytest.raises(ZeroDivisionError):
        worker.close()
    assert ran == ['first']
    worker.close()  # raised once


def test_an_error_is_raised_by_the_next_submit():
    worker = OrderedWorker(depth=1)
    worker.submit(lambda: (_ for _ in ()).throw(OSError('cannot write x.png')))
    with pytest.raises(OSError, match='x.png'):
        for _ in range(100):  # the error surfaces at the latest once the worker has run the failed call
            worker.submit(lambda: None)
            threading.Event().wait(0.01)
    worker.close()


def test_depth_must_be_positive():
    with pytest.raises(ValueError, match='depth must be >= 1'):
        OrderedWorker(depth=0)
