"""Validation pictures for the dense tasks: [image | ground truth | prediction] at the original size."""
from typing import Optional, Sequence

import cv2
import numpy as np
from mmengine.hooks import Hook

from sapiens2.visualization.dense_maps import side_by_side


class DenseVisualizationHook(Hook):
    """Every ``interval`` validation batches, draw the first sample of the batch and hand it to the runner's
    visualizer (``LocalVisBackend`` writes ``<work_dir>/<timestamp>/vis_data/vis_image/<name>_<iter>.png``).

    Subclasses implement :meth:`render` (a (C, H, W) map and its (H, W) mask -> BGR uint8 picture).

    Args:
        interval: Draw every ``interval``-th validation batch.
        max_pictures: At most this many pictures per validation run.
    """

    priority = 'LOWEST'

    def __init__(self, interval: int = 1, max_pictures: int = 4) -> None:
        self.interval = interval
        self.max_pictures = max_pictures

    def render(self, dense: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def after_val_iter(self, runner, batch_idx: int, data_batch: dict = None, outputs: Sequence = None) -> None:
        if batch_idx % self.interval or batch_idx // self.interval >= self.max_pictures or not outputs:
            return
        sample = outputs[0]
        image = cv2.imread(sample.img_path)
        if image is None:
            return
        pred = sample.pred_dense.data.float().cpu().numpy()
        panels = [image]
        if 'gt_dense' in sample:
            mask = sample.gt_dense.mask[0].cpu().numpy().astype(bool)
            panels.append(self.render(sample.gt_dense.data.float().cpu().numpy(), mask))
            panels.append(self.render(pred, mask))
        else:
            panels.append(self.render(pred, None))
        picture = side_by_side(*[cv2.resize(p, image.shape[1::-1]) for p in panels])
        name = f'val_{type(self).__name__}_{batch_idx}'
        runner.visualizer.add_image(name, picture[..., ::-1], step=runner.iter)
