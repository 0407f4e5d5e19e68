"""OpenCV on one thread for a block, for the tests that renders do not depend on OpenCV's thread count."""
from contextlib import contextmanager
from typing import Iterator

import cv2


@contextmanager
def one_opencv_thread() -> Iterator[None]:
    """Run the block with ``cv2.setNumThreads(1)``; the thread count before is restored after."""
    threads = cv2.getNumThreads()
    try:
        cv2.setNumThreads(1)
        yield
    finally:
        cv2.setNumThreads(threads)
