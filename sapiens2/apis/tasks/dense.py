"""Per-image tasks (seg and the projects' dense tasks): one data sample per image, converted to arrays."""
from functools import partial
from typing import Callable, Dict, List, Optional

import numpy as np

from sapiens2.utils.atomic_save import atomic_save_npy
from sapiens2.visualization.dense_maps import side_by_side
from sapiens2.visualization.panels import Panel, PanelOptions

from .base import BaseInferenceTask

MapDrawer = Callable[[np.ndarray, Optional[np.ndarray]], np.ndarray]


class DenseInferenceTask(BaseInferenceTask):
    """A per-pixel task: each image goes through the test pipeline (letterbox or resize, as the config evaluates)
    and ``model.test_step``, whose predictions are already at the original image size.

    Subclasses implement :meth:`decode` (a predicted data sample -> named result arrays) and the drawing.
    """

    def predict(self, images: List[np.ndarray], **kwargs) -> List[dict]:
        return [self.decode(sample) for sample in self.test_step([dict(img=image) for image in images])]

    def decode(self, sample) -> dict:
        """A predicted data sample (e.g. ``pred_dense`` / ``pred_sem_seg`` at the original size) -> result dict of
        numpy arrays."""
        raise NotImplementedError

    @staticmethod
    def foreground(context: Optional[Dict[str, dict]]) -> Optional[np.ndarray]:
        """Foreground mask (H, W) bool from a body-part seg result on the same image, if one was computed."""
        seg = (context or {}).get('seg')
        return None if seg is None else seg['labels'] > 0


class DenseMapInferenceTask(DenseInferenceTask):
    """A per-pixel task whose result is the prediction as one (H, W, C) array under the task's ``name``, saved as
    ``<stem>.npy`` in ``npy_dtype`` and drawn as [image | ``to_bgr(map, foreground mask)``] (normal, albedo).

    A subclass sets ``to_bgr = staticmethod(<drawing function>)`` and its composite panel with :func:`map_panel`."""
    raw_suffixes = ('.npy', )
    npy_dtype = np.float32
    to_bgr: MapDrawer

    def decode(self, sample) -> dict:
        return {self.name: sample.pred_dense.data.float().permute(1, 2, 0).cpu().numpy()}

    def visualize(self, image, result, context=None) -> np.ndarray:
        return side_by_side(image, self.to_bgr(result[self.name], self.foreground(context)))

    def save(self, image, result, out_dir, stem, context=None) -> List[str]:
        path = self.out_path(out_dir, stem, '.npy')
        atomic_save_npy(path, result[self.name].astype(self.npy_dtype))
        return [path]


def map_panel(title: str, key: str, to_bgr: MapDrawer) -> Panel:
    """The composite panel of a one-map task: ``to_bgr(result[key], person mask)``."""
    return Panel(title, partial(_draw_map, key, to_bgr))


def _draw_map(key: str, to_bgr: MapDrawer, image: np.ndarray, result: dict, mask: Optional[np.ndarray],
              options: PanelOptions) -> np.ndarray:
    return to_bgr(result[key], mask)
