"""One picture per image with every task side by side: [image | pose skeleton | body parts | normals | depth |
albedo | alpha] (:data:`PANELS`, then any other task with a registered panel), and a contact sheet of such pictures.

The inputs are the per-task result dicts of :class:`sapiens2.apis.Sapiens2Inferencer`. Each task draws its own panel:
its inference task class registers it (:mod:`sapiens2.visualization.panels`), so a project's task appears here
without this module naming it. A task of :data:`PANELS` without a result gets a grey panel that says so. Pose and seg
panels are drawn in the layout of the task's ``dataset_meta`` given in ``metainfo`` (the model's; without one, the
layout of a model that carries none, :mod:`sapiens2.structures.layout`).
"""
import os
import os.path as osp
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import cv2
import numpy as np

from sapiens2.utils.image_write import write_image

from .dense_maps import side_by_side
from .panels import TASK_PANELS, PanelOptions, task_panel_of

#: (panel title, task name drawn in it; None for the input image), left to right: the released tasks' layout.
PANELS: Tuple[Tuple[str, Optional[str]], ...] = (
    ('image', None), ('pose skeleton', 'pose'), ('body parts', 'seg'), ('normals', 'normal'), ('depth', 'pointmap'),
    ('albedo', 'albedo'), ('alpha', 'matting'))
MISSING_GRAY = 60
TITLE_COLOR = (255, 255, 255)


def panel_layout(results: Mapping[str, dict],
                 panels: Sequence[Tuple[str, Optional[str]]] = PANELS) -> List[Tuple[str, Optional[str]]]:
    """``panels``, then (title, task) of each other task in ``results`` that registered a panel, in their order."""
    named = {task for _, task in panels}
    return list(panels) + [(TASK_PANELS[task].title, task) for task in results
                           if task not in named and task in TASK_PANELS]


def foreground_mask(results: Mapping[str, dict]) -> Optional[np.ndarray]:
    """The person mask (H, W) bool the dense panels are cut out with: that of the first task in the layout whose
    panel outlines the person (body parts > 0, else alpha > 0.5), else None."""
    for _, task in panel_layout(results):
        panel = TASK_PANELS.get(task)
        if task in results and panel is not None and panel.person_mask is not None:
            return panel.person_mask(results[task])
    return None


def task_panel(image: np.ndarray, task: str, result: dict, mask: Optional[np.ndarray], kpt_thr: float = 0.3,
               seg_opacity: float = 0.5, meta: Optional[Mapping] = None) -> np.ndarray:
    """The picture of one task's ``result`` on a BGR ``image`` (same size as the image), drawn by the task's
    registered panel; ``meta`` is the model's ``dataset_meta`` (pose and seg colours)."""
    return task_panel_of(task).draw(image, result, mask, PanelOptions(meta, kpt_thr, seg_opacity))


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
                      panels: Optional[Sequence[Tuple[str, Optional[str]]]] = None,
                      metainfo: Optional[Mapping[str, Mapping]] = None) -> np.ndarray:
    """The titled ``panels`` of one BGR ``image`` (H, W, 3), default :func:`panel_layout` ([image | pose skeleton |
    body parts | normals | depth | albedo | alpha | other registered tasks with a result]); the result is
    (H + title, len(panels) * W, 3) uint8 BGR. ``metainfo``: the ``dataset_meta`` of each task's model, by task
    name."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f'the image must be (H, W, 3) uint8 BGR, got {image.shape} {image.dtype}')
    mask = foreground_mask(results)
    height = title_height(image.shape[0])
    pictures = []
    for title, task in panel_layout(results) if panels is None else panels:
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
