"""DINO projection head: MLP -> bottleneck -> L2 norm -> weight-normalised prototypes."""
import torch.nn.functional as F
from mmengine.model import BaseModule
from torch import Tensor, nn

from sapiens2.registry import MODELS


@MODELS.register_module()
class DINOHead(BaseModule):
    """Projects [CLS] features to prototype logits.

    ``num_layers`` Linear layers (GELU between them) map ``in_channels`` through ``hidden_dim`` to
    ``bottleneck_dim``; the bottleneck is L2-normalised and scored against ``num_prototypes`` prototypes whose
    rows are L2-normalised on the fly (a weight-normalised linear layer with its gain fixed to 1).
    """

    def __init__(self,
                 in_channels: int,
                 num_prototypes: int = 65536,
                 hidden_dim: int = 2048,
                 bottleneck_dim: int = 256,
                 num_layers: int = 3,
                 init_cfg: dict | list | None = dict(type='TruncNormal', layer='Linear', std=0.02, bias=0.0)) -> None:
        super().__init__(init_cfg=init_cfg)
        if num_layers < 1:
            raise ValueError(f'DINOHead num_layers must be >= 1, got {num_layers}')
        dims = [in_channels] + [hidden_dim] * (num_layers - 1) + [bottleneck_dim]
        layers = []
        for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:])):
            layers.append(nn.Linear(d_in, d_out))
            if i < num_layers - 1:
                layers.append(nn.GELU())
        self.mlp = nn.Sequential(*layers)
        self.prototypes = nn.Linear(bottleneck_dim, num_prototypes, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        """(N, in_channels) -> (N, num_prototypes) logits (cosine similarities in [-1, 1])."""
        z = F.normalize(self.mlp(x), dim=-1)
        return F.linear(z, F.normalize(self.prototypes.weight, dim=-1))
