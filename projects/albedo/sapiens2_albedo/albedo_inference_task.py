"""Albedo inference for ``sapiens2.apis`` / ``tools/infer.py --task albedo``."""
from typing import Optional

import numpy as np

from sapiens2.apis import DenseMapInferenceTask
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import albedo_to_bgr
from sapiens2.visualization.panels import Panel, PanelOptions


def albedo_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's albedo, on grey outside the person."""
    return albedo_to_bgr(result['albedo'], mask)


@INFERENCE_TASKS.register_module()
class AlbedoInferenceTask(DenseMapInferenceTask):
    """Albedo: ``albedo`` (H, W, 3) RGB in [0, 1]; ``<stem>.npy`` (float16); [image | albedo on grey]."""
    name, head_types, uses = 'albedo', ('AlbedoHead', ), ('seg', )
    panel = Panel('albedo', albedo_panel)
    to_bgr, npy_dtype = staticmethod(albedo_to_bgr), np.float16
