"""``--show``: the pictures of a run in OpenCV windows, one per task, as they are drawn."""
import os
import re
import sys

import cv2
import numpy as np


def check_display() -> None:
    """Raise a one-line OSError when no window can be opened: an OpenCV built without a GUI (e.g.
    opencv-python-headless) or, on Linux, no display (``$DISPLAY``/``$WAYLAND_DISPLAY``; over SSH or in a container
    run it under ``xvfb-run`` or write the pictures instead)."""
    gui = re.search(r'^\s*GUI:\s*(\S+)', cv2.getBuildInformation(), re.MULTILINE)
    if gui is None or gui.group(1).upper() == 'NONE':
        raise OSError('--show needs an OpenCV with a GUI backend, but this one has none (opencv-python-headless?); '
                      'install opencv-python, or look at the written pictures instead')
    if sys.platform.startswith('linux') and not (os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY')):
        raise OSError('--show needs a display, but $DISPLAY is not set (over SSH use ssh -X, headless use xvfb-run); '
                      'or look at the written pictures instead')


class WindowDisplay:
    """Shows each picture in the window of its title (``sapiens2: <title>``); call from one thread only."""

    def __init__(self) -> None:
        check_display()
        self.titles = set()

    def __call__(self, title: str, picture: np.ndarray) -> None:
        name = f'sapiens2: {title}'
        if name not in self.titles:
            cv2.namedWindow(name, cv2.WINDOW_NORMAL)
            self.titles.add(name)
        cv2.imshow(name, picture)
        cv2.waitKey(1)

    def close(self) -> None:
        """Close the windows."""
        for name in self.titles:
            cv2.destroyWindow(name)
        self.titles.clear()
