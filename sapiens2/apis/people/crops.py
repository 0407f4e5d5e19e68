"""Per-person dense outputs (``--per-person``): each dense map that ran, cropped to a person's box, with no data
outside the person's mask (NaN in the arrays, transparent in the pictures), drawn as the task draws its full map."""
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

from sapiens2.visualization.composite import task_panel

#: The dense tasks whose maps are cropped, and the result array of each.
CROPPED_MAPS = {'normal': 'normal', 'pointmap': 'pointmap', 'albedo': 'albedo', 'matting': 'alpha', 'seg': 'labels'}
#: The "no data" label of a cropped part-label map (integers have no NaN): mmseg's ignore index.
NO_LABEL = 255


def crop_window(box: Sequence[float], shape: Sequence[int]) -> tuple:
    """(y0, y1, x0, x1): the pixels of the xyxy ``box`` (edges included) inside an image of ``shape`` (H, W)."""
    height, width = shape[:2]
    x0, y0 = (int(np.clip(np.floor(v), 0, limit)) for v, limit in ((box[0], width), (box[1], height)))
    x1, y1 = (int(np.clip(np.floor(v) + 1, 0, limit)) for v, limit in ((box[2], width), (box[3], height)))
    return y0, max(y0, y1), x0, max(x0, x1)


def person_crops(results: Mapping[str, dict], mask: np.ndarray, box: Sequence[float]) -> dict:
    """``window`` (y0, y1, x0, x1), the person's ``mask`` there, and per dense task in ``results`` its map cropped
    to the window: float32 with NaN outside the mask (pointmap: also where the point is not valid), part labels
    uint8 with :data:`NO_LABEL` outside."""
    y0, y1, x0, x1 = window = crop_window(box, mask.shape)
    own = mask[y0:y1, x0:x1]
    crops = dict(window=window, mask=own)
    for task, key in CROPPED_MAPS.items():
        if task not in results:
            continue
        full = results[task][key][y0:y1, x0:x1]
        keep = own & results[task]['valid'][y0:y1, x0:x1] if task == 'pointmap' else own
        if task == 'seg':
            crops[task] = np.where(keep, full, NO_LABEL).astype(np.uint8)
        else:
            crops[task] = np.where(keep[..., None] if full.ndim == 3 else keep, full, np.nan).astype(np.float32)
    return crops


def has_data(task: str, crop: np.ndarray) -> np.ndarray:
    """(h, w) bool: the pixels of a cropped map that hold data."""
    if task == 'seg':
        return crop != NO_LABEL
    return ~np.isnan(crop).any(-1) if crop.ndim == 3 else ~np.isnan(crop)


def crop_picture(image: np.ndarray, task: str, crop: np.ndarray, meta: Optional[Mapping] = None,
                 background_label: int = 0) -> np.ndarray:
    """BGRA: the cropped map drawn as the task's full picture (:func:`~sapiens2.visualization.composite.task_panel`)
    on the cropped BGR ``image``, transparent where it holds no data; ``meta``: the seg model's ``dataset_meta``."""
    seen = has_data(task, crop)
    if task == 'seg':
        result = dict(labels=np.where(seen, crop, background_label))
    elif task == 'pointmap':
        result = dict(depth=np.nan_to_num(crop[..., 2]), valid=seen)
    else:
        result = {CROPPED_MAPS[task]: np.nan_to_num(crop)}
    picture = task_panel(image, task, result, seen, meta=meta)
    return np.dstack([picture, seen.astype(np.uint8) * 255])


def crop_name(stem: str, index: int, track_ids: Optional[Sequence[int]]) -> str:
    """``<stem>_person<k>`` (k: the person's index in the frame), or ``<stem>_track<id>`` in a tracked video."""
    return f'{stem}_track{int(track_ids[index])}' if track_ids is not None else f'{stem}_person{index}'


def crop_pattern() -> Tuple[str, str]:
    """What follows an image's stem in the names of its crops (:func:`crop_name` + ``_<task>.npy``/``.png``), as a
    regular expression, and an example: the output plan's family of an image's crops."""
    tasks = '|'.join(CROPPED_MAPS)
    return rf'_(person|track)\d+_({tasks})\.(npy|png)', f'_person0_{next(iter(CROPPED_MAPS))}.npy'
