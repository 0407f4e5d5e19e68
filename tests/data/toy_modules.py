"""A tiny registered model and dataset for engine tests (Sapiens2 nano + linear head on [CLS])."""
import torch
from mmengine.dataset import BaseDataset
from mmengine.evaluator import BaseMetric
from mmengine.model import BaseModel
from mmengine.registry import DATASETS, METRICS, MODELS
from torch import nn

import sapiens2  # noqa: F401


@MODELS.register_module()
class ToySapiens2Regressor(BaseModel):
    """Regresses one number per image from the backbone's [CLS] token."""

    def __init__(self, backbone: dict, init_cfg=None) -> None:
        super().__init__(init_cfg=init_cfg)
        self.backbone = MODELS.build(backbone)
        self.head = nn.Linear(self.backbone.embed_dims, 1)

    def forward(self, inputs, targets=None, mode='tensor'):
        inputs = torch.stack(inputs) if isinstance(inputs, (list, tuple)) else inputs
        pred = self.head(self.backbone(inputs)[0]).squeeze(-1)
        if mode == 'loss':
            targets = torch.stack(targets) if isinstance(targets, (list, tuple)) else targets
            return dict(loss=(pred - targets).square().mean())
        return pred


@DATASETS.register_module()
class ToyImageDataset(BaseDataset):
    """Deterministic random images whose target is their mean intensity."""

    def __init__(self, num_samples: int = 8, size=(32, 32), **kwargs) -> None:
        self.num_samples, self.size = num_samples, size
        super().__init__(serialize_data=False, lazy_init=False, **kwargs)

    def load_data_list(self):
        return [dict(index=i) for i in range(self.num_samples)]

    def prepare_data(self, idx):
        generator = torch.Generator().manual_seed(idx)
        image = torch.rand(3, *self.size, generator=generator)
        return dict(inputs=image, targets=image.mean())


@METRICS.register_module()
class ToyMSEMetric(BaseMetric):
    """Mean squared error of the regressor's predictions."""

    def process(self, data_batch, data_samples) -> None:
        targets, preds = torch.stack(data_batch['targets']), torch.stack(list(data_samples))
        self.results.append(((preds - targets).square().sum().item(), len(targets)))

    def compute_metrics(self, results) -> dict:
        return dict(mse=sum(r[0] for r in results) / sum(r[1] for r in results))
