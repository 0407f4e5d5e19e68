"""sapiens2: Sapiens2 human-centric vision transformers on MMEngine / mmpose / mmsegmentation.

Importing the package applies its adaptations of the OpenMMLab libraries (:mod:`sapiens2.adaptations`) and registers
its modules (see :mod:`sapiens2.registry` for which registry holds what). The backbone, the dense heads and the
engine need torch and MMEngine alone; data pipelines, pose, segmentation and inference register where mmcv, mmpose
and mmseg are installed.
"""
from .adaptations import apply_adaptations
from .version import __version__

apply_adaptations()

from . import engine, evaluation, hub, models, structures  # noqa: E402,F401  (registration)
from .utils.optional import is_installed  # noqa: E402

if is_installed('mmcv'):
    from . import apis, datasets, visualization  # noqa: F401
if is_installed('mmpose'):
    from . import codecs  # noqa: F401

__all__ = ['__version__']
