"""Decoding the image files of the datasets: errors that name the file, and a decompression-bomb guard.

The guard is Pillow's: an image whose header declares more than twice ``PIL.Image.MAX_IMAGE_PIXELS`` pixels (about
179 million by default) is refused before it is decoded, as the inference input reader does
(:mod:`sapiens2.apis.io.sources`). Pillow parses the header only; formats it does not know are left to the decoder.
:mod:`sapiens2.adaptations` applies the guard to mmcv's ``imfrombytes`` (so to ``LoadImageFromFile``, mmpose's
``LoadImage`` and mmseg's ``LoadAnnotations``) and names the file in their errors.
"""
import io
import warnings
from typing import Optional

import cv2
import numpy as np
from PIL import Image

from sapiens2.utils.decoder_messages import decoder_messages, float_image_problem, refuse_damaged_image


def refuse_decompression_bomb(data: bytes, name: Optional[str] = None) -> None:
    """Raise ``ValueError`` if the image header in ``data`` declares more pixels than Pillow's bomb limit (the
    message names the file ``name`` when given)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', Image.DecompressionBombWarning)  # sizes up to the limit are accepted
            with Image.open(io.BytesIO(data)):
                pass
    except Image.DecompressionBombError as err:
        where = f'cannot read image {name}: ' if name else ''
        raise ValueError(f'{where}{err} Refused as a possible decompression bomb; if the image is genuine, raise '
                         'PIL.Image.MAX_IMAGE_PIXELS.') from err
    except Exception:  # noqa: BLE001  (not a header Pillow parses: the decoder decides)
        return


def decode_image(data: bytes, name: str, flag: int = cv2.IMREAD_COLOR) -> np.ndarray:
    """Decode image bytes with OpenCV (``flag`` as ``cv2.imdecode``); errors name the file ``name``, damaged
    compressed data included (:mod:`sapiens2.utils.decoder_messages`)."""
    refuse_decompression_bomb(data, name)
    with decoder_messages() as messages:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), flag) if data else None
    if image is not None:  # decoded in spite of damage: grey rows
        refuse_damaged_image(messages, name)
    problem = float_image_problem(data) if image is None else None
    if problem:
        raise ValueError(f'cannot read image {name}: {problem}.')
    if image is None:
        raise OSError(f'cannot read image {name}: the file is empty, truncated, damaged or not an image OpenCV can '
                      'decode; re-export or re-download it.')
    return image


def read_image_file(path: str, flag: int = cv2.IMREAD_COLOR, what: str = 'image') -> np.ndarray:
    """Read and decode the image file ``path`` (``what`` names it in a missing-file error)."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except FileNotFoundError as err:
        raise FileNotFoundError(f'{what} {path} does not exist') from err
    return decode_image(data, path, flag)
