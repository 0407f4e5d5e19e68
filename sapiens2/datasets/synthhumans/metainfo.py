"""Keypoint and body-part metadata (``sapiens2/metainfo/*.json``) as used by the SynthHumans renderer."""
from functools import lru_cache
from typing import Dict, List

import numpy as np

from sapiens2.metainfo import load_metainfo


@lru_cache(maxsize=None)
def keypoint_meta() -> dict:
    """The parsed ``keypoints308.json``."""
    return load_metainfo('keypoints308.json')


@lru_cache(maxsize=None)
def seg_meta() -> dict:
    """The parsed ``seg29.json``."""
    return load_metainfo('seg29.json')


def keypoint_names() -> List[str]:
    return list(keypoint_meta()['keypoint_names'])


def flip_indices() -> np.ndarray:
    return np.array(keypoint_meta()['flip_indices'], np.int64)


@lru_cache(maxsize=None)
def seg_ids() -> Dict[str, int]:
    """Class name -> id of the 29-class body-part labels."""
    return {name: i for i, name in enumerate(seg_meta()['class_names'])}


def seg_flip_lut() -> np.ndarray:
    """A 256-entry lookup table swapping left/right part labels (``flip_swap_label_pairs``)."""
    lut = np.arange(256, dtype=np.uint8)
    for a, b in seg_meta()['flip_swap_label_pairs']:
        lut[a], lut[b] = b, a
    return lut
