"""Loss modules: one file per loss. The segmentation losses register into mmseg's registry where it is installed."""
from sapiens2.utils.optional import is_installed

from .masked import MaskedGradientMSELoss, MaskedL1Loss

__all__ = ['MaskedGradientMSELoss', 'MaskedL1Loss']

if is_installed('mmseg'):
    from .seg_cross_entropy_loss import Sapiens2SegCrossEntropyLoss  # noqa: F401
    from .seg_dice_loss import Sapiens2DiceLoss  # noqa: F401
    __all__ += ['Sapiens2SegCrossEntropyLoss', 'Sapiens2DiceLoss']
