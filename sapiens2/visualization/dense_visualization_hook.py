"""Validation pictures for the dense tasks: [image | ground truth | prediction] at the original size."""
import os.path as osp
from typing import Optional, Sequence

import cv2
import numpy as np
from mmengine.hooks import Hook

from sapiens2.visualization.dense_maps import side_by_side


class DenseVisualizationHook(Hook):
    """Draws [image | ground truth | prediction] pictures and hands them to the runner's visualizer
    (``LocalVisBackend`` writes ``<save_dir>/vis_data/vis_image/<name>_<step>.png``; ``save_dir`` is the run's log
    folder unless the config's ``visualizer.save_dir`` says otherwise, as ``tools/test.py --show-dir`` does).

    In validation, the first sample of every ``interval``-th batch, at most ``max_pictures`` per run. In testing
    (mmseg's ``SegVisualizationHook`` behaviour), every sample of every ``interval``-th batch, named after its image.
    Subclasses implement :meth:`render` (a (C, H, W) map and its (H, W) mask -> BGR uint8 picture).

    Args:
        interval: Draw every ``interval``-th batch.
        max_pictures: At most this many pictures per validation run.
        draw: Draw at all (``tools/test.py --show-dir`` sets it).
    """

    priority = 'LOWEST'

    def __init__(self, interval: int = 1, max_pictures: int = 4, draw: bool = True) -> None:
        self.interval = interval
        self.max_pictures = max_pictures
        self.draw = draw

    def render(self, dense: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def after_val_iter(self, runner, batch_idx: int, data_batch: dict = None, outputs: Sequence = None) -> None:
        if not self.draw or batch_idx % self.interval or batch_idx // self.interval >= self.max_pictures or not outputs:
            return
        picture = self.picture(outputs[0])
        if picture is not None:
            runner.visualizer.add_image(f'val_{type(self).__name__}_{batch_idx}', picture[..., ::-1], step=runner.iter)

    def after_test_iter(self, runner, batch_idx: int, data_batch: dict = None, outputs: Sequence = None) -> None:
        if not self.draw or batch_idx % self.interval:
            return
        for sample in outputs or ():
            picture = self.picture(sample)
            if picture is not None:
                name = osp.splitext(osp.basename(sample.img_path))[0]
                runner.visualizer.add_image(f'test_{name}', picture[..., ::-1], step=runner.iter)

    def picture(self, sample) -> Optional[np.ndarray]:
        """[image | ground truth | prediction] (BGR) at the image size, or None when the image cannot be read."""
        image = cv2.imread(sample.img_path)
        if image is None:
            return None
        pred = sample.pred_dense.data.float().cpu().numpy()
        panels = [image]
        if 'gt_dense' in sample:
            mask = sample.gt_dense.mask[0].cpu().numpy().astype(bool)
            panels.append(self.render(sample.gt_dense.data.float().cpu().numpy(), mask))
            panels.append(self.render(pred, mask))
        else:
            panels.append(self.render(pred, None))
        return side_by_side(*[cv2.resize(p, image.shape[1::-1]) for p in panels])
