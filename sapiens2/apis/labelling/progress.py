"""One progress line for the whole job, on rank 0: items done of the total, items/s and the time left.

Every rank adds its finished items to a counter in the process group's key-value store (one small message per
item); rank 0 reads the sum twice a second into a tqdm bar that starts at the items earlier runs did.
"""
import threading
from typing import Optional

from tqdm import tqdm

COUNTER_KEY = 'sapiens2/infer/items'
REFRESH_S = 0.5


def _default_store():
    import torch.distributed as torch_dist
    if not torch_dist.is_initialized():
        return None
    return torch_dist.distributed_c10d._get_default_store()


class JobProgress:
    """Counts the items of this rank (:meth:`add`); on rank 0 with ``show``, draws the job's bar."""

    def __init__(self, total: int, earlier: int, rank: int, show: bool) -> None:
        self._store = _default_store()
        self._local = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._bar: Optional[tqdm] = None
        self._thread: Optional[threading.Thread] = None
        if show and rank == 0 and total > 0:
            self._bar = tqdm(total=total, initial=earlier, unit='item', desc='labelling', dynamic_ncols=True)
            self._thread = threading.Thread(target=self._draw, name='sapiens2-progress', daemon=True)
            self._thread.start()

    def add(self, count: int = 1) -> None:
        """``count`` more items finished on this rank (done or failed)."""
        with self._lock:
            self._local += count
            if self._store is not None:
                self._store.add(COUNTER_KEY, count)

    def _done(self) -> int:
        return self._store.add(COUNTER_KEY, 0) if self._store is not None else self._local

    def _draw(self) -> None:
        shown = 0
        while not self._stop.wait(REFRESH_S):
            try:
                done = self._done()
            except RuntimeError:  # the store's host is gone: the job is ending
                return
            self._bar.update(done - shown)
            shown = done

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            try:
                self._bar.update(self._done() - (self._bar.n - self._bar.initial))
            except RuntimeError:
                pass
            self._bar.close()
