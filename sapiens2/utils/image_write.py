"""Write a picture so that a failure says why: ``cv2.imwrite`` returns False for a full disk, a missing folder and a
refused permission alike; encoding in memory and writing the bytes (atomically, never through a link:
:func:`~sapiens2.utils.atomic_save.atomic_write_bytes`) keeps the OS's reason."""
import os.path as osp
from typing import Sequence

import cv2
import numpy as np

from sapiens2.utils.atomic_save import LinkedOutputError, atomic_write_bytes


def write_image(path: str, image: np.ndarray, params: Sequence[int] = ()) -> None:
    """Encode ``image`` by the suffix of ``path`` and write it; ``OSError`` naming the file and the reason."""
    ok, encoded = cv2.imencode(osp.splitext(path)[1] or '.png', image, list(params))
    if not ok:
        raise OSError(f'cannot write {path}: OpenCV cannot encode a {image.shape} {image.dtype} image as '
                      f'{osp.splitext(path)[1]}')
    try:
        atomic_write_bytes(path, encoded.tobytes())
    except LinkedOutputError:
        raise
    except OSError as err:
        raise OSError(err.errno, f'cannot write {path}: {err.strerror or err}') from err
