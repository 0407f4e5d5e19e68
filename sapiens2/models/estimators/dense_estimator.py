"""Backbone + dense head estimator for the normal, pointmap and albedo projects."""
from typing import Dict, List, Optional, Sequence, Union

import torch
from mmengine.model import BaseModel
from torch.utils.checkpoint import checkpoint

from sapiens2.registry import MODELS

DEFAULT_PREPROCESSOR = dict(
    type='ImgDataPreprocessor', mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375], bgr_to_rgb=True)


@MODELS.register_module()
class DenseEstimator(BaseModel):
    """``decode_head(backbone(inputs)[-1])`` with MMEngine's loss / predict / tensor modes.

    The two children are named ``backbone`` and ``decode_head``, so checkpoint keys are exactly the official
    ``backbone.*`` / ``decode_head.*``.

    Args:
        backbone: Backbone config (``Sapiens2`` with ``out_type='featmap'``).
        decode_head: Dense head config (a :class:`DenseTrunkHead` subclass).
        data_preprocessor: Defaults to the official mean/std with BGR -> RGB.
        use_checkpoint: Activation-checkpoint the whole backbone (non-reentrant) in training, as the official
            dense recipes do.
        init_cfg: MMEngine init config.
    """

    def __init__(self,
                 backbone: dict,
                 decode_head: dict,
                 data_preprocessor: Optional[dict] = None,
                 use_checkpoint: bool = False,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor or DEFAULT_PREPROCESSOR, init_cfg=init_cfg)
        self.backbone = MODELS.build(backbone)
        self.decode_head = MODELS.build(decode_head)
        self.use_checkpoint = use_checkpoint

    def extract_feat(self, inputs: torch.Tensor) -> torch.Tensor:
        """The last backbone feature map (B, C, H/16, W/16)."""
        if self.use_checkpoint and self.training and torch.is_grad_enabled():
            feats = checkpoint(self.backbone, inputs, use_reentrant=False)
        else:
            feats = self.backbone(inputs)
        return feats[-1]

    def forward(self,
                inputs: torch.Tensor,
                data_samples: Optional[Sequence] = None,
                mode: str = 'tensor') -> Union[Dict[str, torch.Tensor], List, torch.Tensor, tuple]:
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'predict':
            return self.predict(inputs, data_samples)
        if mode == 'tensor':
            return self.decode_head(self.extract_feat(inputs))
        raise ValueError(f"Invalid mode {mode!r}; DenseEstimator supports 'loss', 'predict' and 'tensor'.")

    def loss(self, inputs: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        """Head losses; MMEngine sums every entry whose name contains ``loss``."""
        return self.decode_head.loss(self.extract_feat(inputs), data_samples)

    def predict(self, inputs: torch.Tensor, data_samples: Sequence) -> List:
        """Attach ``pred_dense`` (original image size) and any head extras to each data sample."""
        predictions = self.decode_head.predict(self.extract_feat(inputs), data_samples)
        for sample, prediction in zip(data_samples, predictions):
            sample.set_data(prediction)
        return list(data_samples)
