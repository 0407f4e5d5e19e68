"""What the image and video decoders say about damaged data, caught in one place.

libjpeg decodes a JPEG whose compressed data is damaged (not truncated) to grey rows and only prints ``Corrupt JPEG
data: ...`` to the process's stderr; FFmpeg decodes a damaged video frame and prints ``[mjpeg @ 0x...] error ...``
there. Neither reaches Python. :func:`decoder_messages` captures file descriptor 2 around one decode call (the C
libraries write there, not to ``sys.stderr``) and returns the lines a decoder wrote; other lines written meanwhile
(another thread's) are passed on to stderr. Every sapiens2 decoder reports damage through it, by one rule: a damaged
image is an error naming the file (as a truncated one is), a damaged video frame is skipped and named in one
warning (:mod:`sapiens2.apis.io.sources`).
"""
import contextlib
import os
import re
import sys
import tempfile
import threading
from typing import Iterator, List, Optional

#: The decoders' lines that mean damaged data: libjpeg(-turbo)'s warnings on the compressed data (not its benign
#: ones, e.g. about markers), libpng's errors (not its warnings, e.g. about colour profiles) and FFmpeg's decoder
#: lines (``[mjpeg @ 0x...] error ...``; OpenCV leaves FFmpeg's log at errors).
DECODER_LINE = re.compile(r'Corrupt JPEG data|Premature end of JPEG|libpng error|^\[\w[\w ]* @ (0x)?[0-9a-fA-F]+\]')

_LOCK = threading.Lock()


class DamagedMediaError(OSError):
    """An image whose decoder reported damaged data."""


@contextlib.contextmanager
def decoder_messages() -> Iterator[List[str]]:
    """Capture what C decoders write to stderr inside the ``with`` block; the yielded list holds their lines after
    it (other lines go on to stderr). Calls from several threads take turns."""
    found: List[str] = []
    with _LOCK, tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield found
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            for line in sink.read().decode('utf-8', 'replace').splitlines():
                if DECODER_LINE.search(line):
                    found.append(line.strip())
                elif line.strip():
                    os.write(2, (line + '\n').encode())


def refuse_damaged_image(messages: List[str], name: Optional[str] = None) -> None:
    """Raise :class:`DamagedMediaError` naming the image ``name`` (when given) if its decoder reported damage
    (``messages`` from :func:`decoder_messages`) yet returned a picture; an image it could not decode at all is its
    caller's error (empty, truncated or not an image)."""
    if messages:
        where = f'cannot read image {name}: ' if name else ''
        raise DamagedMediaError(
            f'{where}the compressed data is damaged (the decoder said: {messages[0]!r}); the decoded picture would '
            'hold grey or smeared rows, so it is not used. Re-export or re-download it.')


#: The first bytes of a TIFF file (little- and big-endian).
TIFF_SIGNATURES = (b'II*\x00', b'MM\x00*')


def float_image_problem(data: bytes) -> Optional[str]:
    """What a TIFF of float samples is, for the error line of a decoder that wants 8-bit pixels (OpenCV reads
    nothing, Pillow refuses 3 channels): its NaN values counted. None for any other file."""
    if not data.startswith(TIFF_SIGNATURES):
        return None
    import cv2
    import numpy as np
    with decoder_messages():  # OpenCV's warnings about the samples go to stderr, not into the result
        array = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if array is None or array.dtype.kind != 'f':
        return None
    nan = int(np.isnan(array).sum())
    values = f'{nan} of its {array.size} values are NaN' if nan else 'none of its values is NaN'
    return (f'it is a TIFF of {8 * array.dtype.itemsize}-bit float values ({values}), not an 8-bit picture: float '
            'samples have no standard colour (and NaN no value at all), so it is not read. Save it as an 8-bit (or '
            '16-bit) image, with NaN replaced and the values scaled to 0..255')
