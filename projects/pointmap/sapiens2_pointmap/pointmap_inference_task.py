"""Pointmap inference for ``sapiens2.apis`` / ``tools/infer.py --task pointmap``."""
from typing import List, Optional

import numpy as np

from sapiens2.apis import DenseInferenceTask
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.utils.atomic_save import atomic_save_npy
from sapiens2.utils.image_write import write_image
from sapiens2.utils.ply import write_ply
from sapiens2.visualization.dense_maps import depth_to_bgr, side_by_side, valid_depth
from sapiens2.visualization.panels import Panel, PanelOptions

#: The depth file is fp16: deeper points (metres) would be stored as inf.
MAX_DEPTH = float(np.finfo(np.float16).max)


def depth_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's turbo depth, black where the point is not valid (``valid``, when given) or not the person."""
    valid = result.get('valid', np.ones(result['depth'].shape, bool))
    return depth_to_bgr(result['depth'], valid if mask is None else valid & mask)


@INFERENCE_TASKS.register_module()
class PointmapInferenceTask(DenseInferenceTask):
    """Metric pointmap = canonical / predicted scale: ``pointmap`` (H, W, 3), ``depth`` (H, W) and ``valid`` (H, W)
    bool, where the point is physically possible (finite, 0 < depth <= 65504 m, what the fp16 depth file holds; a
    real photo can get negative depths).

    Files: ``<stem>_depth.npy`` (fp16, as predicted), ``<stem>_valid.png`` (255 valid, 0 not), ``<stem>.ply`` (the
    valid foreground points, image colours); picture [image | turbo depth] with the same pixels black.
    """
    name, head_types, uses = 'pointmap', ('PointmapHead', ), ('seg', )
    raw_suffixes = ('_depth.npy', '_valid.png', '.ply')
    panel = Panel('depth', depth_panel)

    def decode(self, sample) -> dict:
        pointmap = sample.pred_pointmap.data.float().permute(1, 2, 0).cpu().numpy()
        depth = pointmap[..., 2]
        valid = valid_depth(depth) & np.isfinite(pointmap).all(-1) & (np.abs(depth) <= MAX_DEPTH)
        return dict(pointmap=pointmap, depth=depth, valid=valid)

    def _mask(self, result, context) -> np.ndarray:
        mask = self.foreground(context)
        return result['valid'] if mask is None else result['valid'] & mask

    def visualize(self, image, result, context=None) -> np.ndarray:
        return side_by_side(image, depth_to_bgr(result['depth'], self._mask(result, context)))

    def save(self, image, result, out_dir, stem, context=None) -> List[str]:
        mask = self._mask(result, context)
        depth_path = self.out_path(out_dir, stem, '_depth.npy')
        with np.errstate(over='ignore'):  # depths beyond fp16 are stored as inf, and are not valid
            atomic_save_npy(depth_path, result['depth'].astype(np.float16))
        valid_path = self.out_path(out_dir, stem, '_valid.png')
        write_image(valid_path, result['valid'].astype(np.uint8) * 255)
        ply_path = write_ply(self.out_path(out_dir, stem, '.ply'), result['pointmap'][mask],
                             image[mask][:, ::-1])
        return [depth_path, valid_path, ply_path]
