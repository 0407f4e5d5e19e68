"""Warnings shown once per run (an inferencer call over a whole video), not once per frame."""
import logging
from typing import Set

from mmengine.logging import print_log


class Notices:
    """Logs each kind of warning the first time only; later ones of the same kind are counted (the caller's message
    says so).

    Example:
        >>> notices = Notices()
        >>> notices.warn('whole-image', 'frame 0: no person boxes...')  # shown
        >>> notices.warn('whole-image', 'frame 1: no person boxes...')  # counted, not shown
    """

    def __init__(self) -> None:
        self.shown: Set[str] = set()
        self.counts: dict = {}

    def warn(self, kind: str, message: str) -> None:
        """Log ``message`` as a warning unless a warning of ``kind`` was already logged."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind not in self.shown:
            self.shown.add(kind)
            print_log(message, logger='current', level=logging.WARNING)
