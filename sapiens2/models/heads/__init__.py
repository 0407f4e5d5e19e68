"""Task heads: one file per head. The dense trunk needs torch and MMEngine alone; the pose head (mmpose) and the seg
head (mmseg) load on first use and register with their part (:mod:`sapiens2.registration`)."""
from sapiens2.utils.lazy_exports import lazy_exports
from sapiens2.utils.optional import is_installed

from .dense_predictor_head import DensePredictorHead
from .dense_trunk_head import DenseTrunkHead

__getattr__, __dir__ = lazy_exports(__name__, {'Sapiens2HeatmapHead': '.pose_heatmap_head',
                                               'Sapiens2SegHead': '.seg_head'})

__all__ = ['DensePredictorHead', 'DenseTrunkHead'] + ['Sapiens2HeatmapHead'] * is_installed('mmpose') + \
    ['Sapiens2SegHead'] * is_installed('mmseg')
