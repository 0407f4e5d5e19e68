"""Task heads: one file per head. The pose head needs mmpose and the seg head mmseg; each registers only where its
library is installed (the dense trunk needs torch and MMEngine alone)."""
from sapiens2.utils.optional import is_installed

from .dense_predictor_head import DensePredictorHead
from .dense_trunk_head import DenseTrunkHead

__all__ = ['DensePredictorHead', 'DenseTrunkHead']

if is_installed('mmpose'):
    from .pose_heatmap_head import Sapiens2HeatmapHead  # noqa: F401
    __all__.append('Sapiens2HeatmapHead')
if is_installed('mmseg'):
    from .seg_head import Sapiens2SegHead  # noqa: F401
    __all__.append('Sapiens2SegHead')
