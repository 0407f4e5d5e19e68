"""Loss modules: one file per loss. The segmentation losses (mmseg's registry) load on first use and register with
the seg part (:mod:`sapiens2.registration`)."""
from sapiens2.utils.lazy_exports import lazy_exports
from sapiens2.utils.optional import is_installed

from .masked import MaskedGradientMSELoss, MaskedL1Loss

__getattr__, __dir__ = lazy_exports(__name__, {'Sapiens2SegCrossEntropyLoss': '.seg_cross_entropy_loss',
                                               'Sapiens2DiceLoss': '.seg_dice_loss'})

__all__ = ['MaskedGradientMSELoss', 'MaskedL1Loss'] + \
    ['Sapiens2SegCrossEntropyLoss', 'Sapiens2DiceLoss'] * is_installed('mmseg')
