"""Results keys of the dense ground-truth maps, shared by the dense geometric transforms."""
from typing import Dict, Iterable, List, Optional

# Maps that move with the image under geometric transforms, and how they are resampled by default.
DENSE_MAP_INTERPOLATIONS = dict(gt_mask='nearest', gt_normal='nearest', gt_depth='nearest', gt_albedo='bilinear',
                                gt_alpha='bilinear', gt_foreground='bilinear', gt_background='bilinear',
                                gt_image='bilinear', gt_trimap='nearest')


def present_maps(results: dict, interpolations: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The entries of ``interpolations`` (default: all dense maps) whose key is in ``results``."""
    interpolations = DENSE_MAP_INTERPOLATIONS if interpolations is None else interpolations
    return {key: mode for key, mode in interpolations.items() if key in results}


def present_keys(results: dict, keys: Optional[Iterable[str]] = None) -> List[str]:
    """The ``keys`` (default: all dense maps) that are in ``results``."""
    keys = DENSE_MAP_INTERPOLATIONS if keys is None else keys
    return [key for key in keys if key in results]
