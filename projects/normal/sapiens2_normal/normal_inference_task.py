"""Surface-normal inference for ``sapiens2.apis`` / ``tools/infer.py --task normal``."""
from typing import Optional

import numpy as np

from sapiens2.apis import DenseMapInferenceTask
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import normals_to_bgr
from sapiens2.visualization.panels import Panel, PanelOptions


def normal_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's normals, on black outside the person."""
    return normals_to_bgr(result['normal'], mask)


@INFERENCE_TASKS.register_module()
class NormalInferenceTask(DenseMapInferenceTask):
    """Surface normals: ``normal`` (H, W, 3) unit vectors; ``<stem>.npy``; [image | normals]."""
    name, head_types, uses = 'normal', ('NormalHead', ), ('seg', )
    panel = Panel('normals', normal_panel)
    to_bgr = staticmethod(normals_to_bgr)
