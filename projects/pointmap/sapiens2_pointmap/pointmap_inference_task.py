"""Pointmap inference for ``sapiens2.apis`` / ``tools/infer.py --task pointmap``."""
from typing import List

import numpy as np

from sapiens2.apis import DenseInferenceTask
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.utils.ply import write_ply
from sapiens2.visualization.dense_maps import depth_to_bgr, side_by_side


@INFERENCE_TASKS.register_module()
class PointmapInferenceTask(DenseInferenceTask):
    """Metric pointmap = canonical / predicted scale: ``pointmap`` (H, W, 3), ``depth`` (H, W);
    ``<stem>_depth.npy`` (fp16), ``<stem>.ply`` (foreground points, image colours); [image | turbo depth]."""
    name, head_types, uses = 'pointmap', ('PointmapHead', ), ('seg', )
    raw_suffixes = ('_depth.npy', '.ply')

    def decode(self, sample) -> dict:
        pointmap = sample.pred_pointmap.data.float().permute(1, 2, 0).cpu().numpy()
        return dict(pointmap=pointmap, depth=pointmap[..., 2])

    def _mask(self, result, context) -> np.ndarray:
        mask = self.foreground(context)
        valid = result['depth'] > 0
        return valid if mask is None else valid & mask

    def visualize(self, image, result, context=None) -> np.ndarray:
        return side_by_side(image, depth_to_bgr(result['depth'], self._mask(result, context)))

    def save(self, image, result, out_dir, stem, context=None) -> List[str]:
        mask = self._mask(result, context)
        depth_path = self.out_path(out_dir, stem, '_depth.npy')
        np.save(depth_path, result['depth'].astype(np.float16))
        ply_path = write_ply(self.out_path(out_dir, stem, '.ply'), result['pointmap'][mask],
                             image[mask][:, ::-1])
        return [depth_path, ply_path]
