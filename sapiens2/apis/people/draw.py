"""Pictures of the people: instance masks in one colour per person (or track), and their 3D skeletons seen by a
fixed virtual camera (matplotlib, Agg), drawn in the layout's links."""
from typing import Sequence, Tuple

import cv2
import numpy as np

#: Weight of a person's colour over the image inside its mask.
MASK_OPACITY = 0.55
#: The fixed view of the 3D skeletons: degrees above the horizon, and around the vertical axis.
VIEW_ELEVATION, VIEW_AZIMUTH = 15, -60


def draw_instance_masks(image: np.ndarray, masks: np.ndarray, colors: Sequence[Tuple[int, int, int]]) -> np.ndarray:
    """``image`` (BGR) with each mask (N, H, W) filled in its RGB colour and outlined."""
    picture = image.copy()
    for mask, color in zip(masks, colors):
        bgr = np.array(color[::-1], np.float32)
        picture[mask] = ((1 - MASK_OPACITY) * picture[mask] + MASK_OPACITY * bgr).astype(np.uint8)
        contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        cv2.drawContours(picture, contours, -1, tuple(int(c) for c in color[::-1]), 1)
    return picture


def draw_skeletons_3d(skeletons: np.ndarray, links: Sequence[Sequence[int]], colors: Sequence[Tuple[int, int, int]],
                      size: Tuple[int, int]) -> np.ndarray:
    """A BGR picture of ``size`` (H, W): the 3D keypoints (N, K, 3) (camera frame, metres; NaN left out) and their
    links, one colour per person, on equal axes (up is -y of the camera), from a fixed viewpoint."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    height, width = size
    figure = Figure(figsize=(width / 100, height / 100), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(projection='3d')
    seen = skeletons[~np.isnan(skeletons).any(-1)] if skeletons.size else np.zeros((0, 3))
    for points, color in zip(skeletons, colors):
        rgb = np.array(color) / 255
        x, y, z = points[:, 0], points[:, 2], -points[:, 1]  # plot axes: right, depth, up
        axes.scatter(x, y, z, color=rgb, s=2, depthshade=False)
        if len(links):  # one line per person, its links separated by NaN (a link to an unseen keypoint is not drawn)
            ends = np.asarray(links).reshape(-1, 2)
            segments = np.concatenate([np.stack([coord[ends[:, 0]], coord[ends[:, 1]], np.full(len(ends), np.nan)], 1)
                                       .ravel()[None] for coord in (x, y, z)])
            axes.plot(*segments, color=rgb, linewidth=1)
    if len(seen):
        centre, half = (seen.max(0) + seen.min(0)) / 2, max(float((seen.max(0) - seen.min(0)).max()) / 2, 0.5)
        axes.set_xlim(centre[0] - half, centre[0] + half)
        axes.set_ylim(centre[2] - half, centre[2] + half)
        axes.set_zlim(-centre[1] - half, -centre[1] + half)
    axes.set_box_aspect((1, 1, 1))
    axes.set_xlabel('x (m)', fontsize=6)
    axes.set_ylabel('depth (m)', fontsize=6)
    axes.set_zlabel('up (m)', fontsize=6)
    axes.tick_params(labelsize=5)
    axes.view_init(elev=VIEW_ELEVATION, azim=VIEW_AZIMUTH)
    figure.subplots_adjust(left=0, right=0.94, bottom=0.08, top=1)
    figure.canvas.draw()
    rgba = np.asarray(figure.canvas.buffer_rgba())
    return cv2.resize(cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGR), (width, height))
