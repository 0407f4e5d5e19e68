"""Frames of videos held back until every task's result for them is final.

A task may revise a frame's result with later frames (the pose task's two-sided smoothing waits ``lag`` seconds):
:meth:`BaseInferenceTask.settled_until` says up to which frame its results are final, and
:meth:`BaseInferenceTask.settle` gives them. Images and the frames of tasks that revise nothing pass straight
through; the frames of a video are released in order.
"""
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: (source, frame index, image, {task name: result})
Item = Tuple[Any, int, np.ndarray, Dict[str, dict]]


class PendingFrames:
    """Holds the predicted frames of each video until they are final.

    Args:
        tasks: The inference tasks whose results the frames hold.
    """

    def __init__(self, tasks: Sequence) -> None:
        self.tasks = tasks
        self.held: Dict[str, Deque[Item]] = {}

    def add(self, source, index: int, image: np.ndarray, results: Dict[str, dict]) -> List[Item]:
        """Add a predicted frame; return the frames that are final now, in order."""
        if source.kind != 'video':
            return [(source, index, image, results)]
        self.held.setdefault(source.name, deque()).append((source, index, image, results))
        limits = [task.settled_until(source.name) for task in self.tasks]
        known = [limit for limit in limits if limit is not None]
        return self._release(source.name, min(known) if known else index)

    def flush(self, source=None) -> List[Item]:
        """Release every frame held of ``source`` (of every source when None), final with the frames that are in."""
        names = [source.name] if source is not None else list(self.held)
        return [item for name in names for item in self._release(name, None)]

    def _release(self, name: str, last: Optional[int]) -> List[Item]:
        queue = self.held.get(name)
        released = []
        while queue and (last is None or queue[0][1] <= last):
            source, index, image, results = queue.popleft()
            results = {task.name: task.settle(name, index, results[task.name]) for task in self.tasks
                       if task.name in results}
            released.append((source, index, image, results))
        if not queue:
            self.held.pop(name, None)
        return released
