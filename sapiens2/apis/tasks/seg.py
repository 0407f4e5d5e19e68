"""Body-part segmentation inference: stretch to the input, forward, upsample the logits, argmax."""
from typing import Dict, List, Optional

import numpy as np
from torch import Tensor

from sapiens2.registry import INFERENCE_TASKS
from sapiens2.visualization.dense_maps import overlay_labels, side_by_side
from .dense import DenseInferenceTask


@INFERENCE_TASKS.register_module()
class SegInferenceTask(DenseInferenceTask):
    """29-class body-part segmentation: result ``labels`` (H, W) uint8 at the original size.

    Writes ``<stem>_seg.npy`` (the label map) and draws [image | palette overlay] side by side
    (as the official ``vis_seg.py``).

    Args:
        opacity: Weight of the palette colour in the overlay.
        resize: ``'stretch'`` as the official tool, or ``'letterbox'``.
    """
    name = 'seg'
    head_types = ('Sapiens2SegHead', )

    def __init__(self, model, cfg, dtype: str = 'fp32', resize: str = 'stretch', opacity: float = 0.5,
                 input_size=None) -> None:
        super().__init__(model, cfg, dtype, resize=resize, input_size=input_size)
        self.opacity = opacity

    def decode(self, dense: Tensor, extras: Dict[str, Tensor]) -> dict:
        return dict(labels=dense.argmax(dim=0).to('cpu').numpy().astype(np.uint8))

    def visualize(self, image: np.ndarray, result: dict, context: Optional[dict] = None) -> np.ndarray:
        return side_by_side(image, overlay_labels(image, result['labels'], opacity=self.opacity))

    def save(self, image: np.ndarray, result: dict, out_dir: str, stem: str,
             context: Optional[dict] = None) -> List[str]:
        path = self.out_path(out_dir, stem, '_seg.npy')
        np.save(path, result['labels'])
        return [path]
