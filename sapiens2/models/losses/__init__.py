"""Loss modules: one file per loss."""
from .masked import MaskedGradientMSELoss, MaskedL1Loss
from .seg_cross_entropy_loss import Sapiens2SegCrossEntropyLoss
from .seg_dice_loss import Sapiens2DiceLoss

__all__ = ['MaskedGradientMSELoss', 'MaskedL1Loss', 'Sapiens2SegCrossEntropyLoss', 'Sapiens2DiceLoss']
