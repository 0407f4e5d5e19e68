from .data_preprocessor import MultiViewDataPreprocessor
from .dino_head import DINOHead
from .dino_loss import DINOLoss
from .koleo_loss import KoLeoLoss
from .mae_decoder import MAEDecoder
from .mae_loss import MAELoss, patchify, unpatchify
from .mask_generator import MixedMaskGenerator
from .pretrainer import Sapiens2Pretrainer

__all__ = [
    'MultiViewDataPreprocessor', 'DINOHead', 'DINOLoss', 'KoLeoLoss', 'MAEDecoder', 'MAELoss', 'patchify', 'unpatchify',
    'MixedMaskGenerator', 'Sapiens2Pretrainer'
]
