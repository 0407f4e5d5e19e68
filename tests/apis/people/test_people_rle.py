"""COCO RLE round trip: pycocotools decodes what :func:`encode_mask` writes, through JSON."""
import json

import numpy as np
from pycocotools import mask as mask_utils

from sapiens2.apis.people.rle import decode_mask, encode_mask


def test_pycocotools_decodes_the_json_rle_we_write():
    rng = np.random.default_rng(0)
    mask = np.zeros((37, 53), bool)
    mask[5:30, 10:40] = True
    mask &= rng.random(mask.shape) > 0.2  # holes: many runs
    rle = json.loads(json.dumps(encode_mask(mask)))
    assert rle['size'] == [37, 53] and isinstance(rle['counts'], str)
    decoded = mask_utils.decode(dict(size=rle['size'], counts=rle['counts'].encode()))
    assert decoded.shape == mask.shape and (decoded.astype(bool) == mask).all()
    assert int(mask_utils.area(dict(size=rle['size'], counts=rle['counts'].encode()))) == mask.sum()
    assert (decode_mask(rle) == mask).all()
    assert not decode_mask(encode_mask(np.zeros((4, 6), bool))).any()
