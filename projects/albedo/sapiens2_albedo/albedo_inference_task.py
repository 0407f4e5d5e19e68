"""Albedo inference for ``sapiens2.apis`` / ``tools/infer.py --task albedo``."""
import numpy as np

from sapiens2.apis import DenseMapInferenceTask, map_panel
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import albedo_to_bgr


@INFERENCE_TASKS.register_module()
class AlbedoInferenceTask(DenseMapInferenceTask):
    """Albedo: ``albedo`` (H, W, 3) RGB in [0, 1]; ``<stem>.npy`` (float16); [image | albedo on grey]; in the
    composite, the albedo on grey outside the person."""
    name, head_types, uses = 'albedo', ('AlbedoHead', ), ('seg', )
    panel = map_panel('albedo', 'albedo', albedo_to_bgr)
    to_bgr, npy_dtype = staticmethod(albedo_to_bgr), np.float16
