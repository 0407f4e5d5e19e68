"""Live inputs: webcams (``webcam``, ``webcam:N``, mmpose's convention) and stream URLs (``http(s)://``,
``rtsp://``...), read with OpenCV's ``VideoCapture`` (the path video files take).

A live source never waits for the model: a thread reads frames as the source sends them and keeps only the newest,
so when the model is slower than the source the frames that arrive meanwhile are dropped (never queued); frame
indices count every frame the source sent, so a drop shows as a gap. When the source ends (or the run is stopped),
the number of frames processed and dropped and the effective frame rate are reported. Anything else, e.g. a file
named ``0``, stays a file.
"""
import logging
import re
import threading
import time
from typing import Iterator, Optional, Tuple
from urllib.parse import urlparse

import cv2
import numpy as np

WEBCAM = re.compile(r'^webcam(?::(\d+))?$')
STREAM_SCHEMES = ('http', 'https', 'rtsp', 'rtsps', 'rtmp', 'udp', 'tcp')
#: Seconds to wait for a stream to open or to send its next frame.
STREAM_TIMEOUT_S = 15


def is_live_input(text: str) -> bool:
    """Whether ``text`` names a webcam (``webcam``, ``webcam:1``) or a stream URL."""
    return bool(WEBCAM.match(text)) or urlparse(text).scheme.lower() in STREAM_SCHEMES


def live_name(text: str) -> str:
    """The output name of a live input: ``webcam_0``, or the stem of the URL's path (its host when empty)."""
    webcam = WEBCAM.match(text)
    if webcam:
        return f'webcam_{webcam.group(1) or 0}'
    url = urlparse(text)
    stem = url.path.rstrip('/').rsplit('/', 1)[-1].rsplit('.', 1)[0] or url.hostname or 'stream'
    return re.sub(r'[^A-Za-z0-9_-]+', '_', stem)


def open_capture(text: str) -> cv2.VideoCapture:
    """Open a webcam or a stream; a missing camera or an unreachable stream raises one-line OSError."""
    webcam = WEBCAM.match(text)
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)  # OpenCV's own lines would precede ours
    try:
        if webcam:
            capture = cv2.VideoCapture(int(webcam.group(1) or 0))
        else:
            timeouts = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, STREAM_TIMEOUT_S * 1000,
                        cv2.CAP_PROP_READ_TIMEOUT_MSEC, STREAM_TIMEOUT_S * 1000]
            capture = cv2.VideoCapture(text, cv2.CAP_FFMPEG, timeouts)
    finally:
        cv2.utils.logging.setLogLevel(level)
    if not capture.isOpened():
        if webcam:
            raise OSError(f'cannot open {text}: no camera with index {webcam.group(1) or 0} (check that it is '
                          'connected and not used by another program; webcam:N picks another one)')
        raise OSError(f'cannot open stream {text}: unreachable, or not a video stream OpenCV can decode')
    return capture


class LatestFrames:
    """Frames of an opened capture, newest first: a reader thread keeps only the last frame read, so that a slow
    consumer gets the newest frame and the others are dropped. Iterate once; yields ``(index, BGR image)``."""

    def __init__(self, capture: cv2.VideoCapture, name: str, fps: float) -> None:
        self.capture, self.name, self.fps = capture, name, fps
        self.processed = self.dropped = 0
        self._latest: Optional[Tuple[int, np.ndarray]] = None
        self._ended = self._stop = False
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._read, name=f'sapiens2-capture-{name}', daemon=True)

    def _read(self) -> None:
        index = 0
        while not self._stop:
            ok, frame = self.capture.read()
            with self._ready:
                if not ok:
                    self._ended = True
                else:
                    self._latest = (index, frame)
                self._ready.notify_all()
            if not ok:
                return
            index += 1

    def __iter__(self) -> Iterator[Tuple[int, np.ndarray]]:
        self._thread.start()
        start, last = time.monotonic(), -1
        try:
            while True:
                with self._ready:
                    self._ready.wait_for(lambda: self._ended or (self._latest and self._latest[0] > last))
                    if not self._latest or self._latest[0] <= last:
                        break
                    index, frame = self._latest
                self.dropped += index - last - 1
                self.processed += 1
                last = index
                yield index, frame
        finally:
            self._stop = True
            self._thread.join(timeout=STREAM_TIMEOUT_S)
            if not self._thread.is_alive():
                self.capture.release()
            self._report(time.monotonic() - start)

    def _report(self, seconds: float) -> None:
        from mmengine.logging import print_log  # not at import: input checks answer without MMEngine
        rate = self.processed / seconds if seconds > 0 else 0.0
        print_log(f'{self.name}: {self.processed} frames processed in {seconds:.1f} s ({rate:.2f} frames/s; the '
                  f'source sends {self.fps:.3g} frames/s), {self.dropped} dropped while the model was busy',
                  logger='current', level=logging.INFO)
