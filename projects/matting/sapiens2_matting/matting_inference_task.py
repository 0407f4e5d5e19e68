"""Matting inference for ``sapiens2.apis`` / ``tools/infer.py --task matting``."""
from typing import List, Optional

import numpy as np

from sapiens2.apis import DenseInferenceTask
from sapiens2.registry import INFERENCE_TASKS
from sapiens2.utils.image_write import write_image
from sapiens2.visualization.dense_maps import side_by_side
from sapiens2.visualization.panels import Panel, PanelOptions

from .matting_channels import split_prediction
from .matting_pictures import alpha_to_bgr, checkerboard, composite_over, rgba_cutout


def alpha_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's alpha, as grey."""
    return alpha_to_bgr(result['alpha'])


def matte_person(result: dict) -> np.ndarray:
    """The person: alpha > 0.5."""
    return result['alpha'] > 0.5


@INFERENCE_TASKS.register_module()
class MattingInferenceTask(DenseInferenceTask):
    """Alpha matting: ``alpha`` (H, W) and ``foreground`` (H, W, 3) pre-multiplied RGB, both in [0, 1];
    ``<stem>_cutout.png`` (RGBA), ``<stem>_alpha.png`` (grey); [image | alpha | cut-out over a checkerboard]."""
    name, head_types = 'matting', ('MattingHead', )
    raw_suffixes = ('_cutout.png', '_alpha.png')
    panel = Panel('alpha', alpha_panel, person_mask=matte_person)

    def decode(self, sample) -> dict:
        foreground, alpha = split_prediction(sample.pred_dense.data.float().clamp(0, 1))
        return dict(alpha=alpha[0].cpu().numpy(), foreground=foreground.permute(1, 2, 0).cpu().numpy())

    def visualize(self, image, result, context=None) -> np.ndarray:
        board = checkerboard(*image.shape[:2])
        return side_by_side(image, alpha_to_bgr(result['alpha']),
                            composite_over(result['foreground'], result['alpha'], board))

    def save(self, image, result, out_dir, stem, context=None) -> List[str]:
        paths = [self.out_path(out_dir, stem, '_cutout.png'), self.out_path(out_dir, stem, '_alpha.png')]
        for path, picture in zip(paths, (rgba_cutout(result['foreground'], result['alpha']),
                                         alpha_to_bgr(result['alpha'])[..., 0])):
            write_image(path, picture)
        return paths
