"""Runs submitted calls one after another on a background thread, in submission order."""
import queue
import threading
from typing import Any, Callable, Optional

_STOP = object()


class OrderedWorker:
    """One daemon thread that runs ``submit``-ted calls in order, at most ``depth`` of them waiting.

    :class:`~sapiens2.apis.io.writer.ResultWriter` uses it to encode and write results while the model runs (PNG
    encoding in OpenCV and file writes release the GIL). The first exception a call raises is re-raised in the caller
    by the next :meth:`submit` or by :meth:`close`; the calls submitted after it are not run.
    """

    def __init__(self, depth: int) -> None:
        if depth < 1:
            raise ValueError(f'worker queue depth must be >= 1, got {depth}')
        self._calls: queue.Queue = queue.Queue(maxsize=depth)
        self._error: Optional[BaseException] = None  # raised once in the caller
        self._failed = False  # a call raised: the rest are skipped
        self._thread = threading.Thread(target=self._run, name='sapiens2-writer', daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            call = self._calls.get()
            if call is _STOP:
                return
            if not self._failed:
                fn, args = call
                try:
                    fn(*args)
                except BaseException as error:  # handed to the caller, raised there
                    self._error, self._failed = error, True

    def _raise_pending(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)`` (blocks while ``depth`` calls wait); raises the error of an earlier call, if any."""
        self._raise_pending()
        self._calls.put((fn, args))

    def close(self) -> None:
        """Wait for every queued call; raises the first error one of them raised."""
        if self._thread.is_alive():
            self._calls.put(_STOP)
            self._thread.join()
        self._raise_pending()
