"""The files a video's frames stream into: its MP4 picture and its JSON Lines records.

A run that cannot finish one leaves nothing unreadable at its final name. The MP4 is written under a temporary name
and moved to its name when closed (an interrupted run keeps the frames written so far), after a check that it can be
read back: OpenCV's writer ignores a full disk and would leave an MP4 without its index (``moov atom not found``).
The JSON Lines file is readable while written (a stream, Ctrl-C keep every finished frame); when the disk fills, it
is cut back to its complete lines and renamed ``<name>.partial``. Either way the error names the file, the space
written and the space free (:func:`~sapiens2.utils.atomic_save.disk_full_error`).
"""
import contextlib
import errno
import os
import shutil
from typing import Sequence

import cv2
import numpy as np

from sapiens2.utils.atomic_save import AtomicOutput, disk_full_cause, disk_full_error, open_fresh
from sapiens2.utils.decoder_messages import decoder_messages

#: Free space under which an MP4 that OpenCV left unreadable is taken for a full disk (OpenCV hides the errno).
LOW_SPACE = 16 * 1024 * 1024


class VideoFile:
    """An MP4 of the pictures of a video's frames (see the module docstring)."""

    def __init__(self, path: str, fps: float, size: Sequence[int]) -> None:
        self.out = AtomicOutput(path)
        self.frames = 0
        self.video = cv2.VideoWriter(self.out.tmp, cv2.VideoWriter_fourcc(*'mp4v'), fps, tuple(size))
        if not self.video.isOpened():
            self.out.discard()
            raise OSError(f'cannot open {path} for writing (OpenCV without an mp4v encoder?)')

    def write(self, picture: np.ndarray) -> None:
        self.video.write(picture)
        self.frames += 1

    def close(self) -> None:
        self.video.release()
        if self.frames and not _readable_video(self.out.tmp):
            written = os.path.getsize(self.out.tmp) if os.path.exists(self.out.tmp) else 0
            self.out.discard()
            folder = os.path.dirname(self.out.path) or '.'
            if shutil.disk_usage(folder).free < LOW_SPACE:
                full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                raise disk_full_error(self.out.path, written, os.path.exists(self.out.path), full, partial=True)
            raise OSError(f'cannot write {self.out.path}: the MP4 OpenCV wrote ({self.frames} frames) cannot be read '
                          'back, so it was removed')
        self.out.commit()


def _readable_video(path: str) -> bool:
    with decoder_messages():  # FFmpeg's own words on a broken file (moov atom not found) are the error's to say
        capture = cv2.VideoCapture(path)
        try:
            return capture.isOpened() and capture.read()[0]
        finally:
            capture.release()


class JsonLinesFile:
    """A video's JSON Lines records, each :meth:`write` whole lines, flushed (see the module docstring)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file = open_fresh(path)
        self.complete, self.lines = 0, 0  # bytes and lines known to be on disk

    def write(self, text: str) -> None:
        try:
            self.file.write(text)
            self.file.flush()
        except OSError as err:
            full = disk_full_cause(err)
            if full is None:
                raise
            raise self._abandoned(full) from err
        self.complete, self.lines = self.file.tell(), self.lines + text.count('\n')

    def _abandoned(self, err: OSError) -> OSError:
        with contextlib.suppress(OSError):  # its buffer cannot be written either
            self.file.close()
        os.truncate(self.path, self.complete)
        partial = self.path + '.partial'
        kept = f'{self.path} was not finished'
        if not os.path.lexists(partial):
            os.replace(self.path, partial)  # direct write: renames this run's own file, cut to whole lines
            kept += f'; its {self.lines} complete lines are kept in {partial}'
        return disk_full_error(self.path, self.complete, False, err, partial=True, kept=kept)

    def close(self) -> None:
        if not self.file.closed:
            self.file.close()
