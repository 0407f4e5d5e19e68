"""Optional dependencies: sapiens2's backbone and dense heads need only torch and MMEngine; mmcv, mmpose and mmseg
add the data pipelines, pose and segmentation."""
import importlib.util


def is_installed(package: str) -> bool:
    """Whether ``package`` can be found for import (without importing it)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False
