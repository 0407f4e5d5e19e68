"""Person masks as COCO run-length encoding (``{"size": [h, w], "counts": str}``), the format COCO tools read."""
from typing import Dict

import numpy as np
from pycocotools import mask as mask_utils


def encode_mask(mask: np.ndarray) -> Dict[str, object]:
    """A (H, W) bool mask as compressed COCO RLE with ``counts`` as text (JSON-ready)."""
    rle = mask_utils.encode(np.asfortranarray(np.asarray(mask, dtype=np.uint8)))
    return dict(size=[int(v) for v in rle['size']], counts=rle['counts'].decode('ascii'))


def decode_mask(rle: Dict[str, object]) -> np.ndarray:
    """The (H, W) bool mask of a COCO RLE written by :func:`encode_mask` (``counts`` as text or bytes)."""
    counts = rle['counts']
    return mask_utils.decode(dict(size=list(rle['size']),
                                  counts=counts.encode('ascii') if isinstance(counts, str) else counts)).astype(bool)
