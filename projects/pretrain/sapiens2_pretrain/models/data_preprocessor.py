"""Batches and normalises the multi-crop views."""
from typing import Sequence

import torch
from mmengine.model import BaseDataPreprocessor
from torch import Tensor

from sapiens2.registry import MODELS

VIEW_KEYS = ('global_views', 'local_views')


@MODELS.register_module()
class MultiViewDataPreprocessor(BaseDataPreprocessor):
    """Stacks per-sample views to (B, V, 3, H, W), casts to float, optionally BGR -> RGB, and applies
    ``(x - mean) / std`` (the official task-model values by default)."""

    def __init__(self,
                 mean: Sequence[float] = (123.675, 116.28, 103.53),
                 std: Sequence[float] = (58.395, 57.12, 57.375),
                 bgr_to_rgb: bool = True,
                 non_blocking: bool = False) -> None:
        super().__init__(non_blocking=non_blocking)
        self.bgr_to_rgb = bgr_to_rgb
        self.register_buffer('mean', torch.tensor(mean, dtype=torch.float32).view(1, 1, 3, 1, 1), False)
        self.register_buffer('std', torch.tensor(std, dtype=torch.float32).view(1, 1, 3, 1, 1), False)

    def forward(self, data: dict, training: bool = False) -> dict:
        data = self.cast_data(data)
        inputs = data['inputs']
        if isinstance(inputs, (list, tuple)):
            inputs = {key: [sample[key] for sample in inputs] for key in VIEW_KEYS}
        missing = [key for key in VIEW_KEYS if key not in inputs]
        if missing:
            raise KeyError(f'MultiViewDataPreprocessor: inputs lack {missing}; use PackMultiViewInputs')
        views = {key: self._normalise(inputs[key]) for key in VIEW_KEYS}
        return dict(inputs=views, data_samples=data.get('data_samples'))

    def _normalise(self, views: Tensor | Sequence[Tensor]) -> Tensor:
        x = views if isinstance(views, Tensor) else torch.stack(list(views))
        x = x.float()
        if self.bgr_to_rgb:
            x = x.flip(2)
        return (x - self.mean) / self.std
