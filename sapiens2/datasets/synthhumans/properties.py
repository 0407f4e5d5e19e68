"""Image-level scene properties of a SynthHumans sample, known exactly from its scene: labels for semantic probes.

Every property is a class index into ``PROPERTY_CLASSES``; the main person is the first one drawn (the one whose
size in the image the scene fixes, see :func:`~.scene.sample_scene`).
"""
import colorsys
import os.path as osp
from typing import Dict, List, Tuple

import numpy as np

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_write_text

from .scene import Scene

PROPERTY_CLASSES = dict(
    num_people=('1', '2', '3'),
    orientation=('front', 'side', 'back'),  # main person's facing direction relative to the camera
    garment_colour=('neutral', 'warm', 'green', 'blue'),  # main person's trousers or shorts
    distance=('near', 'mid', 'far'),  # main person's distance from the camera
)
DISTANCE_BINS = (2.9, 3.5)  # metres: about the terciles of the main person's distance
NEUTRAL_SATURATION = 0.25  # HLS saturation below which a colour is neutral (grey, black, white)


def _orientation(yaw: float) -> int:
    """0 front, 1 side, 2 back: the person faces the camera at ``yaw = pi``."""
    offset = abs((yaw - np.pi + np.pi) % (2 * np.pi) - np.pi)
    return 0 if offset < np.pi / 4 else (1 if offset < 3 * np.pi / 4 else 2)


def _colour_class(bgr: Tuple[int, int, int]) -> int:
    """0 neutral, 1 warm (red-yellow hues), 2 green-cyan, 3 blue-magenta."""
    b, g, r = bgr
    hue, _, saturation = colorsys.rgb_to_hls(r / 255, g / 255, b / 255)
    if saturation < NEUTRAL_SATURATION:
        return 0
    degrees = (hue * 360 + 30) % 360  # warm: [-30, 90) degrees
    return 1 + int(degrees // 120)


def scene_properties(scene: Scene) -> Dict[str, int]:
    """The class index of every property in ``PROPERTY_CLASSES`` for one scene."""
    main = scene.persons[0]
    return dict(num_people=len(scene.persons) - 1, orientation=_orientation(main.yaw),
                garment_colour=_colour_class(main.look.bottom_color),
                distance=int(np.searchsorted(DISTANCE_BINS, main.z)))


def write_properties(root: str, split: str, properties: List[Dict[str, int]]) -> str:
    """Write ``<root>/annotations/scene_properties_<split>.json`` (classes and one record per image); its path."""
    path = osp.join(root, 'annotations', f'scene_properties_{split}.json')
    atomic_write_text(path, strict_json.dumps(dict(classes={k: list(v) for k, v in PROPERTY_CLASSES.items()},
                                            images=properties)))
    return path
