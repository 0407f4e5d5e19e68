"""Dataset readers, transforms and the SynthHumans renderer."""
from .synthhumans import ensure_synthhumans, generate_synthhumans, render_scene  # noqa: F401
from . import transforms  # noqa: F401,E402  (dense transforms: Letterbox, PackDenseInputs, ...)
from .dense_dir_dataset import DenseDirDataset  # noqa: F401,E402
from . import pose  # noqa: F401,E402  (308-keypoint datasets and transforms, mmpose registries)
from . import seg  # noqa: F401,E402  (29-class body-part dataset and transforms, mmseg registries)
