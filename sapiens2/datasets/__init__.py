"""Dataset readers, transforms and the SynthHumans renderer (needs mmcv; pose needs mmpose, seg mmseg)."""
from sapiens2.utils.optional import is_installed

from . import transforms  # noqa: F401  (dense transforms: Letterbox, PackDenseInputs, ...)
from .dense_dir_dataset import DenseDirDataset  # noqa: F401
from .synthhumans import ensure_synthhumans, generate_synthhumans, render_scene  # noqa: F401

if is_installed('mmpose'):
    from . import pose  # noqa: F401  (308-keypoint datasets and transforms, mmpose registries)
if is_installed('mmseg'):
    from . import seg  # noqa: F401  (29-class body-part dataset and transforms, mmseg registries)
