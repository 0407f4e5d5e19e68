from .pointmap_head import PointmapHead
from .pointmap_losses import (
                              PointmapIntrinsicsConsistencyLoss,
                              PointmapL1Loss,
                              PointmapNormalLoss,
                              PointmapScaleL1Loss,
                              PointmapShiftInvariantL1Loss,
                              SiLogLoss,
)
from .pointmap_transformers import POINTMAP_CONVERTER

__all__ = [
    'PointmapHead', 'PointmapIntrinsicsConsistencyLoss', 'PointmapL1Loss', 'PointmapNormalLoss',
    'PointmapScaleL1Loss', 'PointmapShiftInvariantL1Loss', 'SiLogLoss', 'POINTMAP_CONVERTER'
]
