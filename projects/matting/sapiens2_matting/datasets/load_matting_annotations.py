"""Read the alpha matte (and the optional foreground, background and trimap) of a sample, with clear errors."""
from typing import Optional

import cv2
import numpy as np
from mmcv.transforms import BaseTransform

from sapiens2.datasets.image_files import read_image_file
from sapiens2.datasets.transforms.dense_loading import check_same_size
from sapiens2.registry import TRANSFORMS

BIT_DEPTHS = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}
# A pre-multiplied foreground never exceeds alpha; more than this share of pixels above alpha + 4 levels means the
# files hold the plain colour.
PREMULTIPLIED_TOLERANCE, PREMULTIPLIED_MAX_VIOLATIONS = 4 / 255, 0.01


def read_unit_image(path: str, what: str) -> np.ndarray:
    """An 8- or 16-bit image as float32 in [0, 1], channels as stored (BGR for colour)."""
    image = read_image_file(path, cv2.IMREAD_UNCHANGED, what)
    if image.dtype not in BIT_DEPTHS:
        raise ValueError(f'{what} {path!r} has {image.dtype} pixels; save it as an 8- or 16-bit PNG.')
    return image.astype(np.float32) / BIT_DEPTHS[image.dtype]


def read_alpha(path: str) -> np.ndarray:
    """An (H, W) float32 alpha matte in [0, 1] from a greyscale image (or a colour image with equal channels)."""
    alpha = read_unit_image(path, 'alpha matte')
    if alpha.ndim == 3:
        if alpha.shape[2] == 4:
            raise ValueError(f'alpha matte {path!r} has 4 channels (RGBA); save the matte as a greyscale image.')
        if not (alpha == alpha[..., :1]).all():
            raise ValueError(f'alpha matte {path!r} has {alpha.shape[2]} different channels; save the matte as a '
                             'greyscale image.')
        alpha = alpha[..., 0]
    return alpha


def read_colour(path: str, what: str) -> np.ndarray:
    """An (H, W, 3) float32 RGB image in [0, 1]."""
    image = read_unit_image(path, what)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f'{what} {path!r} must be a 3-channel colour image, got shape {image.shape}.')
    return np.ascontiguousarray(image[..., ::-1])


def read_trimap(path: str) -> np.ndarray:
    """An (H, W) uint8 trimap: 0 background, 255 foreground, 128 unknown (any other stored value)."""
    trimap = read_image_file(path, cv2.IMREAD_UNCHANGED, 'trimap')
    if trimap.dtype != np.uint8 or trimap.ndim != 2:
        raise ValueError(f'trimap {path!r} must be an 8-bit greyscale image (0 background, 128 unknown, '
                         f'255 foreground), got {trimap.dtype} with shape {trimap.shape}.')
    return np.where((trimap == 0) | (trimap == 255), trimap, 128).astype(np.uint8)


@TRANSFORMS.register_module()
class LoadMattingAnnotations(BaseTransform):
    """Load ``gt_alpha`` (H, W) float32, and when the sample has them ``gt_foreground`` (pre-multiplied RGB),
    ``gt_background`` (RGB), both (H, W, 3) float32 in [0, 1], and ``gt_trimap`` (uint8 0/128/255).

    Also sets ``gt_image``, a copy of the image the composition loss compares with (taken before any photometric
    augmentation), and ``gt_mask``: every pixel valid (geometric transforms mark the letterbox padding invalid).
    Every map must have the image's size; a foreground stored as plain colour is multiplied by alpha, and one
    declared pre-multiplied that exceeds alpha is refused.
    """

    #: Dropped from the test pipeline for inference (see :mod:`sapiens2.apis.pipeline`).
    ground_truth_only = True

    def transform(self, results: dict) -> Optional[dict]:
        results['gt_alpha'] = read_alpha(results['alpha_path'])
        check_same_size(results, 'gt_alpha', results['alpha_path'])
        alpha = results['gt_alpha'][..., None]
        if 'foreground_path' in results:
            path = results['foreground_path']
            foreground = read_colour(path, 'foreground')
            results['gt_foreground'] = foreground
            check_same_size(results, 'gt_foreground', path)
            if results.get('foreground_premultiplied', False):
                above = (foreground > alpha + PREMULTIPLIED_TOLERANCE).any(-1).mean()
                if above > PREMULTIPLIED_MAX_VIOLATIONS:
                    raise ValueError(f'foreground {path!r} exceeds its alpha at {above:.0%} of the pixels, so it is '
                                     'not pre-multiplied; set foreground_premultiplied=False in the dataset.')
            else:
                results['gt_foreground'] = foreground * alpha
        if 'background_path' in results:
            results['gt_background'] = read_colour(results['background_path'], 'background')
            check_same_size(results, 'gt_background', results['background_path'])
        if 'trimap_path' in results:
            results['gt_trimap'] = read_trimap(results['trimap_path'])
            check_same_size(results, 'gt_trimap', results['trimap_path'])
        results['gt_image'] = results['img'].copy()
        results['gt_mask'] = np.ones(results['gt_alpha'].shape, bool)
        return results
