from . import heads  # noqa: F401  (registers the task heads)
from .backbones import ARCH_SETTINGS, Sapiens2
from .estimators import DenseEstimator
from .losses.masked import MaskedGradientMSELoss, MaskedL1Loss

__all__ = ['ARCH_SETTINGS', 'Sapiens2', 'DenseEstimator', 'MaskedGradientMSELoss', 'MaskedL1Loss']
