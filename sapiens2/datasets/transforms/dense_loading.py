"""File readers and checks shared by the dense loading transforms of the projects."""
import cv2
import numpy as np


def read_mask(path: str) -> np.ndarray:
    """Channel 0 of a mask image, as bool (non-zero = valid)."""
    mask = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if mask is None:
        raise FileNotFoundError(f'Cannot read mask image {path!r}.')
    return (mask[..., 0] if mask.ndim == 3 else mask) > 0


def check_same_size(results: dict, key: str, path: str) -> None:
    """Raise a ValueError naming both files if ``results[key]`` and ``results['img']`` differ in size."""
    img_hw, map_hw = results['img'].shape[:2], results[key].shape[:2]
    if img_hw != map_hw:
        raise ValueError(f'{key} {path!r} is {map_hw[0]}x{map_hw[1]} but image {results["img_path"]!r} is '
                         f'{img_hw[0]}x{img_hw[1]}; files matched by name must have the same size.')
