"""One picture per image with every task side by side: [image | pose skeleton | body parts | normals | depth |
albedo | alpha], and a contact sheet of such pictures.

The inputs are the per-task result dicts of :class:`sapiens2.apis.Sapiens2Inferencer` (``pose``: ``keypoints``,
``keypoint_scores``, ``bboxes``; ``seg``: ``labels``; ``normal``: ``normal``; ``pointmap``: ``depth``; ``albedo``:
``albedo``; ``matting``: ``alpha``). A task without a result gets a grey panel that says so. Pose and seg panels
are drawn in the layout of the task's ``dataset_meta`` given in ``metainfo`` (the model's; without one, the layout of a
model that carries none, :mod:`sapiens2.structures.layout`).
"""
import os
import os.path as osp
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import cv2
import numpy as np

from sapiens2.structures.layout import class_palette, keypoint_style
from sapiens2.utils.image_write import write_image

from .dense_maps import albedo_to_bgr, depth_to_bgr, normals_to_bgr, overlay_labels, side_by_side
from .keypoints import draw_keypoints

#: (panel title, task name drawn in it; None for the input image), left to right.
PANELS: Tuple[Tuple[str, Optional[str]], ...] = (
    ('image', None), ('pose skeleton', 'pose'), ('body parts', 'seg'), ('normals', 'normal'), ('depth', 'pointmap'),
    ('albedo', 'albedo'), ('alpha', 'matting'))
MISSING_GRAY = 60
TITLE_COLOR = (255, 255, 255)


def foreground_mask(results: Mapping[str, dict]) -> Optional[np.ndarray]:
    """The person mask (H, W) bool the dense panels are cut out with: body parts > 0, else alpha > 0.5, else None."""
    if 'seg' in results:
        return results['seg']['labels'] > 0
    if 'matting' in results:
        return results['matting']['alpha'] > 0.5
    return None


def task_panel(image: np.ndarray, task: str, result: dict, mask: Optional[np.ndarray], kpt_thr: float = 0.3,
               seg_opacity: float = 0.5, meta: Optional[Mapping] = None) -> np.ndarray:
    """The picture of one task's ``result`` on a BGR ``image`` (same size as the image); ``meta`` is the model's
    ``dataset_meta`` (pose and seg colours)."""
    if task == 'pose':
        size = max(1, int(round(image.shape[0] / 192)))  # 2 px lines and points at 384 px
        style = keypoint_style(meta, result['keypoints'].shape[1])
        return draw_keypoints(image, result['keypoints'], result['keypoint_scores'], style, kpt_thr=kpt_thr,
                              radius=size, thickness=size, bboxes=result.get('bboxes'))
    if task == 'seg':
        return overlay_labels(image, result['labels'], class_palette(meta), opacity=seg_opacity)
    if task == 'normal':
        return normals_to_bgr(result['normal'], mask)
    if task == 'pointmap':
        valid = result.get('valid', np.ones(result['depth'].shape, bool))  # the pointmap task's validity mask
        return depth_to_bgr(result['depth'], valid if mask is None else valid & mask)
    if task == 'albedo':
        return albedo_to_bgr(result['albedo'], mask)
    if task == 'matting':
        alpha = np.clip(result['alpha'], 0.0, 1.0) * 255.0
        return cv2.cvtColor(alpha.round().astype(np.uint8), cv2.COLOR_GRAY2BGR)
    raise KeyError(f'no composite panel for task {task!r}; known tasks: {[t for _, t in PANELS if t]}')


def title_height(image_height: int) -> int:
    """Height of the title bar above the panels of an image of ``image_height`` pixels."""
    return max(12, int(round(image_height * 0.06)))


def titled(panel: np.ndarray, title: str, height: int) -> np.ndarray:
    """``panel`` with a black title bar of ``height`` pixels above it."""
    bar = np.zeros((height, panel.shape[1], 3), np.uint8)
    scale = height / 32.0
    thickness = max(1, int(round(height / 16)))
    (width, _), _ = cv2.getTextSize(title, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    x = max(2, (panel.shape[1] - width) // 2)
    cv2.putText(bar, title, (x, int(height * 0.75)), cv2.FONT_HERSHEY_SIMPLEX, scale, TITLE_COLOR, thickness,
                cv2.LINE_AA)
    return np.concatenate([bar, panel], axis=0)


def missing_panel(image: np.ndarray, task: str) -> np.ndarray:
    """A grey panel that says ``no <task> model``."""
    panel = np.full_like(image, MISSING_GRAY)
    text = f'no {task} model'
    scale = max(0.3, image.shape[1] / 400.0)
    (width, _), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    cv2.putText(panel, text, (max(2, (image.shape[1] - width) // 2), image.shape[0] // 2), cv2.FONT_HERSHEY_SIMPLEX,
                scale, (200, 200, 200), 1, cv2.LINE_AA)
    return panel


def composite_picture(image: np.ndarray, results: Mapping[str, dict], kpt_thr: float = 0.3,
                      panels: Sequence[Tuple[str, Optional[str]]] = PANELS,
                      metainfo: Optional[Mapping[str, Mapping]] = None) -> np.ndarray:
    """[image | pose skeleton | body parts | normals | depth | albedo | alpha] of one BGR ``image`` (H, W, 3),
    each panel titled; the result is (H + title, len(panels) * W, 3) uint8 BGR. ``metainfo``: the ``dataset_meta``
    of each task's model, by task name."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f'the image must be (H, W, 3) uint8 BGR, got {image.shape} {image.dtype}')
    mask = foreground_mask(results)
    height = title_height(image.shape[0])
    pictures = []
    for title, task in panels:
        if task is None:
            picture = image
        elif task in results:
            picture = task_panel(image, task, results[task], mask, kpt_thr, meta=(metainfo or {}).get(task))
        else:
            picture = missing_panel(image, task)
        pictures.append(titled(picture, title, height))
    return side_by_side(*pictures)


def contact_sheet(pictures: Sequence[np.ndarray], width: Optional[int] = None) -> np.ndarray:
    """Pictures stacked top to bottom, each resized to ``width`` (default: the narrowest one's) keeping its aspect."""
    if not pictures:
        raise ValueError('a contact sheet needs at least one picture')
    width = width or min(p.shape[1] for p in pictures)
    rows = [cv2.resize(p, (width, max(1, int(round(p.shape[0] * width / p.shape[1])))), interpolation=cv2.INTER_AREA)
            for p in pictures]
    return np.concatenate(rows, axis=0)


def write_composites(frames: Sequence[Tuple[str, np.ndarray, Dict[str, dict]]], out_dir: str,
                     kpt_thr: float = 0.3, sheet_name: Optional[str] = 'contact_sheet.jpg',
                     sheet_width: int = 1600, metainfo: Optional[Mapping[str, Mapping]] = None) -> List[str]:
    """Write ``<out_dir>/<name>.png``, the composite picture of each ``(name, BGR image, per-task results)`` frame,
    and (unless ``sheet_name`` is None) their contact sheet; return the paths, the sheet last. ``metainfo`` as in
    :func:`composite_picture`."""
    names = [name for name, _, _ in frames]
    if len(set(names)) != len(names):
        raise ValueError(f'frame names must be unique, got {names}')
    os.makedirs(out_dir, exist_ok=True)
    paths, pictures = [], []
    for name, image, results in frames:
        picture = composite_picture(image, results, kpt_thr, metainfo=metainfo)
        path = osp.join(out_dir, f'{name}.png')
        write_image(path, picture)
        paths.append(path)
        pictures.append(picture)
    if sheet_name and pictures:
        path = osp.join(out_dir, sheet_name)
        sheet = contact_sheet(pictures, min(sheet_width, min(p.shape[1] for p in pictures)))
        write_image(path, sheet, [cv2.IMWRITE_JPEG_QUALITY, 85])
        paths.append(path)
    return paths
