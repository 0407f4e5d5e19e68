from .matting_head import MattingHead
from .matting_losses import (
                             MattingAlphaGradientLoss,
                             MattingAlphaL1Loss,
                             MattingCompositionLoss,
                             MattingForegroundL1Loss,
                             MattingLaplacianLoss,
)
from .matting_transformers import MATTING_CONVERTER

__all__ = [
    'MattingAlphaGradientLoss', 'MattingAlphaL1Loss', 'MattingCompositionLoss', 'MattingForegroundL1Loss',
    'MattingHead', 'MattingLaplacianLoss', 'MATTING_CONVERTER'
]
