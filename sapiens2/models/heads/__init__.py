"""Task heads: one file per head."""
from .pose_heatmap_head import Sapiens2HeatmapHead  # noqa: F401
from .seg_head import Sapiens2SegHead  # noqa: F401
