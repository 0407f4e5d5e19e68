"""Runs an iterator in a background thread, a bounded number of items ahead of its consumer."""
import queue
import threading
from typing import Iterable, Iterator, TypeVar

T = TypeVar('T')
_END = object()


def prefetched(items: Iterable[T], depth: int) -> Iterator[T]:
    """Yields ``items`` in order while a daemon thread produces up to ``depth`` of them ahead.

    Used to read and decode the next frames while the model runs on the current batch (image decoding in OpenCV
    releases the GIL). An exception raised by ``items`` is re-raised in the consumer at the position where it
    happened. When the consumer stops early (``close()``, garbage collection), the thread stops after at most one
    more item.
    """
    if depth < 1:
        raise ValueError(f'prefetch depth must be >= 1, got {depth}')
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as error:  # handed to the consumer, raised there
            put((_END, error))
            return
        put((_END, None))

    thread = threading.Thread(target=produce, name='sapiens2-prefetch', daemon=True)
    thread.start()
    try:
        while True:
            item, error = buffer.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
