"""Albedo inference for ``sapiens2.apis`` / ``tools/infer.py --task albedo``."""
from typing import List, Optional

import numpy as np

from sapiens2.apis import DenseInferenceTask
from sapiens2.engine.atomic_save import atomic_save_npy
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import albedo_to_bgr, side_by_side
from sapiens2.visualization.panels import Panel, PanelOptions


def albedo_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's albedo, on grey outside the person."""
    return albedo_to_bgr(result['albedo'], mask)


@INFERENCE_TASKS.register_module()
class AlbedoInferenceTask(DenseInferenceTask):
    """Albedo: ``albedo`` (H, W, 3) RGB in [0, 1]; ``<stem>.npy``; [image | albedo on grey]."""
    name, head_types, uses = 'albedo', ('AlbedoHead', ), ('seg', )
    raw_suffixes = ('.npy', )
    panel = Panel('albedo', albedo_panel)

    def decode(self, sample) -> dict:
        return dict(albedo=sample.pred_dense.data.float().permute(1, 2, 0).cpu().numpy())

    def visualize(self, image, result, context=None) -> np.ndarray:
        return side_by_side(image, albedo_to_bgr(result['albedo'], self.foreground(context)))

    def save(self, image, result, out_dir, stem, context=None) -> List[str]:
        path = self.out_path(out_dir, stem, '.npy')
        atomic_save_npy(path, result['albedo'].astype(np.float16))
        return [path]
