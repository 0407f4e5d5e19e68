"""Estimators: the dense estimator (torch and MMEngine); the seg test-time-augmentation model (mmseg) loads on first
use and registers with the seg part (:mod:`sapiens2.registration`)."""
from sapiens2.utils.lazy_exports import lazy_exports
from sapiens2.utils.optional import is_installed

from .dense_estimator import DenseEstimator

__getattr__, __dir__ = lazy_exports(__name__, {'Sapiens2SegTTAModel': '.seg_tta_model'})

__all__ = ['DenseEstimator'] + ['Sapiens2SegTTAModel'] * is_installed('mmseg')
