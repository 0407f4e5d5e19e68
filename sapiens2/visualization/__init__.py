"""Drawing helpers for keypoints, part labels, normals, depth and albedo, and the all-task composite pictures with
the panels the tasks register."""
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
from .panels import Panel, PanelOptions, register_panel

__all__ = [
    'PANELS', 'Panel', 'PanelOptions', 'albedo_to_bgr', 'composite_picture', 'contact_sheet', 'depth_bounds',
    'depth_to_bgr', 'draw_keypoints', 'normals_to_bgr', 'overlay_labels', 'register_panel', 'side_by_side',
    'write_composites'
]
