"""Body-part segmentation inference: mmseg's test path (resize as the config's test pipeline, logits resized back
to the original size, argmax)."""
from typing import List, Optional

import numpy as np

from sapiens2.registry import INFERENCE_TASKS
from sapiens2.structures import layout
from sapiens2.utils.atomic_save import atomic_save_npy
from sapiens2.visualization.dense_maps import overlay_labels, side_by_side
from sapiens2.visualization.panels import Panel, PanelOptions

from .dense import DenseInferenceTask


def seg_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's body parts: the palette of the layout (``options.meta``) over the image."""
    return overlay_labels(image, result['labels'], layout.class_palette(options.meta), opacity=options.seg_opacity)


def seg_person(result: dict) -> np.ndarray:
    """The person: every body part (label > 0)."""
    return result['labels'] > 0


@INFERENCE_TASKS.register_module()
class SegInferenceTask(DenseInferenceTask):
    """Body-part segmentation: result ``labels`` (H, W) uint8 at the original size (``pred_sem_seg``).

    Writes ``<stem>_seg.npy`` (the label map) and draws [image | palette overlay] side by side
    (as the official ``vis_seg.py``, which stretches the image to the input as the seg test pipelines do), in the
    palette of the model's layout (its ``dataset_meta``; :func:`sapiens2.structures.layout.class_palette`).

    Args:
        opacity: Weight of the palette colour in the overlay.
    """
    name = 'seg'
    head_types = ('Sapiens2SegHead', )
    raw_suffixes = ('_seg.npy', )
    panel = Panel('body parts', seg_panel, person_mask=seg_person)

    def __init__(self, model, cfg, dtype: str = 'fp32', opacity: float = 0.5) -> None:
        super().__init__(model, cfg, dtype)
        self.opacity = opacity
        head = getattr(model, 'decode_head', None)
        self.palette = layout.class_palette(getattr(model, 'dataset_meta', None), getattr(head, 'num_classes', None))

    def decode(self, sample) -> dict:
        return dict(labels=sample.pred_sem_seg.data[0].cpu().numpy().astype(np.uint8))

    def visualize(self, image: np.ndarray, result: dict, context: Optional[dict] = None) -> np.ndarray:
        return side_by_side(image, overlay_labels(image, result['labels'], self.palette, self.opacity))

    def save(self, image: np.ndarray, result: dict, out_dir: str, stem: str,
             context: Optional[dict] = None) -> List[str]:
        path = self.out_path(out_dir, stem, '_seg.npy')
        atomic_save_npy(path, result['labels'])
        return [path]
