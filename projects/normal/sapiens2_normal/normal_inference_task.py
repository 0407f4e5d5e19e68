"""Surface-normal inference for ``sapiens2.apis`` / ``tools/infer.py --task normal``."""
from typing import List, Optional

import numpy as np

from sapiens2.apis import DenseInferenceTask
from sapiens2.engine.atomic_save import atomic_save_npy
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import normals_to_bgr, side_by_side
from sapiens2.visualization.panels import Panel, PanelOptions


def normal_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's normals, on black outside the person."""
    return normals_to_bgr(result['normal'], mask)


@INFERENCE_TASKS.register_module()
class NormalInferenceTask(DenseInferenceTask):
    """Surface normals: ``normal`` (H, W, 3) unit vectors; ``<stem>.npy``; [image | normals]."""
    name, head_types, uses = 'normal', ('NormalHead', ), ('seg', )
    raw_suffixes = ('.npy', )
    panel = Panel('normals', normal_panel)

    def decode(self, sample) -> dict:
        return dict(normal=sample.pred_dense.data.float().permute(1, 2, 0).cpu().numpy())

    def visualize(self, image, result, context=None) -> np.ndarray:
        return side_by_side(image, normals_to_bgr(result['normal'], self.foreground(context)))

    def save(self, image, result, out_dir, stem, context=None) -> List[str]:
        path = self.out_path(out_dir, stem, '.npy')
        atomic_save_npy(path, result['normal'].astype(np.float32))
        return [path]
