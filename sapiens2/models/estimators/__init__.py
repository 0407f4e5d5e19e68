from sapiens2.utils.optional import is_installed

from .dense_estimator import DenseEstimator

__all__ = ['DenseEstimator']

if is_installed('mmseg'):
    from .seg_tta_model import Sapiens2SegTTAModel  # noqa: F401
    __all__.append('Sapiens2SegTTAModel')
