import threading
import time

import pytest

from sapiens2.apis.io.prefetch import prefetched


def test_yields_every_item_in_order():
    assert list(prefetched(range(100), depth=3)) == list(range(100))
    assert list(prefetched([], depth=1)) == []


def test_produces_ahead_in_another_thread_at_most_depth_items():
    produced, threads = [], set()

    def items():
        for i in range(10):
            threads.add(threading.get_ident())
            produced.append(i)
            yield i

    iterator = prefetched(items(), depth=2)
    assert next(iterator) == 0
    deadline = time.monotonic() + 5
    while len(produced) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    # 1 consumed, 2 buffered, 1 produced and waiting for room in the buffer
    assert len(produced) == 4
    assert threads and threading.get_ident() not in threads
    assert list(iterator) == list(range(1, 10))


def test_error_is_raised_in_the_consumer_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise OSError('cannot read frame 3')

    iterator = prefetched(items(), depth=4)
    assert [next(iterator), next(iterator)] == [1, 2]
    with pytest.raises(OSError, match='frame 3'):
        next(iterator)


def test_closing_early_stops_the_producer():
    produced = []

    def items():
        for i in range(1000):
            produced.append(i)
            yield i

    iterator = prefetched(items(), depth=2)
    assert next(iterator) == 0
    iterator.close()
    # on a loaded machine the producer may take a while to see the close: wait until it has stood still for 0.2 s
    deadline, count = time.monotonic() + 10, -1
    while count != len(produced) and time.monotonic() < deadline:
        count = len(produced)
        time.sleep(0.2)
    assert count == len(produced) < 10


def test_bad_depth():
    with pytest.raises(ValueError, match='depth must be >= 1'):
        next(prefetched([1], depth=0))
