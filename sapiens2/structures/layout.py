"""A model's layout (its keypoints or classes) read from its ``dataset_meta``, the metainfo every checkpoint carries.

Pose models carry mmpose's parsed metainfo (``parse_pose_metainfo``: ``keypoint_id2name``, ``keypoint_colors``,
``skeleton_links``, ``skeleton_link_colors``, ``flip_pairs``, ``sigmas``...), seg models mmseg's ``classes`` and
``palette``. Inference, drawing, export and conversion read the layout through these functions only; the packaged
308-keypoint and 29-class layouts are the fallback for a model whose metainfo has none.
"""
from typing import List, Mapping, Optional

import numpy as np

from sapiens2.metainfo import load_metainfo

Meta = Optional[Mapping]
#: Point colour (RGB) of a keypoint layout without colours.
PLAIN_POINT_COLOR = (255, 128, 0)


def _keypoints308() -> dict:
    return load_metainfo('keypoints308.json')


def _seg29() -> dict:
    return load_metainfo('seg29.json')


def _own_keypoint_names(meta: Meta) -> Optional[List[str]]:
    meta = meta or {}
    id2name = meta.get('keypoint_id2name')
    if isinstance(id2name, Mapping) and id2name:  # int keys, or str keys after a JSON round trip (.safetensors)
        return [str(id2name[key]) for key in sorted(id2name, key=int)]
    names = meta.get('keypoint_names')
    return [str(name) for name in names] if names else None


def _checked(what: str, count: int, expected: Optional[int]) -> None:
    if expected is not None and count != expected:
        raise ValueError(f"the model's dataset_meta describes {count} {what} but the model predicts {expected}; "
                         'the checkpoint metainfo (meta.dataset_meta) or the config metainfo belongs to another layout')


def keypoint_names(meta: Meta, num_keypoints: Optional[int] = None) -> Optional[List[str]]:
    """The keypoint names of a pose ``dataset_meta``; without any, the 308 names for 308 keypoints, else None."""
    names = _own_keypoint_names(meta)
    if names is not None:
        _checked('keypoints', len(names), num_keypoints)
        return names
    return list(_keypoints308()['keypoint_names']) if num_keypoints == _keypoints308()['num_keypoints'] else None


def is_keypoints308(meta: Meta, num_keypoints: int) -> bool:
    """Whether a pose model predicts the Sapiens2 308 keypoints (by its names, or by count when it has none)."""
    return keypoint_names(meta, num_keypoints) == list(_keypoints308()['keypoint_names'])


def flip_pairs(meta: Meta, num_keypoints: Optional[int] = None) -> Optional[List[List[int]]]:
    """The left/right keypoint index pairs of a pose ``dataset_meta`` (each once, sorted); without keypoint
    metainfo, the 308 pairs for 308 keypoints; else None."""
    if _own_keypoint_names(meta) is None:
        meta = _keypoints308() if num_keypoints == _keypoints308()['num_keypoints'] else {}
    pairs = (meta or {}).get('flip_pairs')
    if pairs is None:
        return None
    return [list(pair) for pair in sorted({tuple(sorted(int(i) for i in pair)) for pair in pairs})]


def keypoint_sigmas(meta: Meta, num_keypoints: int) -> np.ndarray:
    """The (K,) OKS sigmas of a pose layout (tracking, OKS); 0.05 per keypoint for a metainfo without any."""
    sigmas = (meta or {}).get('sigmas')
    if sigmas is None or len(sigmas) != num_keypoints:
        return np.full(num_keypoints, 0.05)
    return np.asarray(sigmas, dtype=np.float64)


def keypoint_style(meta: Meta, num_keypoints: int) -> dict:
    """Drawing style of a pose layout: ``point_colors`` (K, 3) RGB, ``links`` (L, 2), ``link_colors`` (L, 3) RGB.

    From the metainfo's colours and skeleton; a layout without colours gets plain points and its links (if any);
    a model with no keypoint metainfo the 308 style for 308 keypoints, plain points otherwise.
    """
    if _own_keypoint_names(meta) is None and num_keypoints == _keypoints308()['num_keypoints']:
        data = _keypoints308()
        return dict(point_colors=np.array([k['color'] for k in data['keypoint_info']], dtype=np.uint8),
                    links=np.array([link['link'] for link in data['skeleton_links']], dtype=np.int64),
                    link_colors=np.array([link['color'] for link in data['skeleton_links']], dtype=np.uint8))
    meta = meta or {}
    names = _own_keypoint_names(meta)
    if names is not None:
        _checked('keypoints', len(names), num_keypoints)
    colors = meta.get('keypoint_colors')
    if colors is None or len(colors) != num_keypoints:
        colors = np.tile(np.array(PLAIN_POINT_COLOR, np.uint8), (num_keypoints, 1))
    links = np.asarray(meta.get('skeleton_links', []), dtype=np.int64).reshape(-1, 2)
    link_colors = meta.get('skeleton_link_colors')
    link_colors = (np.asarray(link_colors, dtype=np.uint8).reshape(-1, 3) if link_colors is not None
                   and len(link_colors) == len(links) else np.asarray(colors, np.uint8)[links[:, 0]])
    return dict(point_colors=np.asarray(colors, dtype=np.uint8), links=links, link_colors=link_colors)


def class_names(meta: Meta, num_classes: Optional[int] = None) -> Optional[List[str]]:
    """The class names of a seg ``dataset_meta``; without any, the 29 names for 29 classes, else None."""
    classes = (meta or {}).get('classes')
    if classes:
        _checked('classes', len(classes), num_classes)
        return [str(name) for name in classes]
    return list(_seg29()['class_names']) if num_classes == _seg29()['num_classes'] else None


def class_palette(meta: Meta, num_classes: Optional[int] = None) -> np.ndarray:
    """The (N, 3) uint8 RGB palette of a seg layout: the metainfo's ``palette``; without one, the 29-class palette
    for 29 classes (or an unknown count), else a fixed pseudo-random palette of ``num_classes`` colours."""
    palette = (meta or {}).get('palette')
    if palette is not None and len(palette):
        if num_classes is not None and len(palette) < num_classes:
            raise ValueError(f"the model's dataset_meta palette has {len(palette)} colours for {num_classes} classes")
        return np.asarray(palette, dtype=np.uint8).reshape(-1, 3)
    if num_classes is None or num_classes == _seg29()['num_classes']:
        return np.array(_seg29()['palette_rgb'], dtype=np.uint8)
    return np.random.default_rng(0).integers(0, 256, size=(num_classes, 3), dtype=np.uint8)


def jsonable(value):
    """``value`` (a metainfo: dicts, tuples, numpy arrays and scalars) as plain JSON types; dict keys as strings."""
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value

