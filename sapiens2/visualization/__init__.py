"""Drawing helpers for keypoints, part labels, normals, depth and albedo, and the all-task composite pictures."""
from .composite import PANELS, composite_picture, contact_sheet, write_composites
from .dense_maps import (
                         albedo_to_bgr,
                         depth_bounds,
                         depth_to_bgr,
                         normals_to_bgr,
                         overlay_labels,
                         side_by_side,
)
from .keypoints import draw_keypoints

__all__ = [
    'PANELS', 'albedo_to_bgr', 'composite_picture', 'contact_sheet', 'depth_bounds', 'depth_to_bgr', 'draw_keypoints',
    'normals_to_bgr', 'overlay_labels', 'side_by_side', 'write_composites'
]
