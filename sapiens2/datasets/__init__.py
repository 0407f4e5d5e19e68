"""Dataset readers, transforms and the SynthHumans renderer (needs mmcv). The pose data (``sapiens2.datasets.pose``,
mmpose) and the segmentation data (``sapiens2.datasets.seg``, mmseg) register with their parts
(:mod:`sapiens2.registration`) when a config needs them."""
from . import transforms  # noqa: F401  (dense transforms: Letterbox, PackDenseInputs, ...)
from .dense_dir_dataset import DenseDirDataset  # noqa: F401
from .synthhumans import ensure_synthhumans, generate_synthhumans, render_scene  # noqa: F401
