"""KoLeo regulariser: spreads L2-normalised features by pushing apart nearest neighbours."""
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sapiens2.registry import MODELS


@MODELS.register_module()
class KoLeoLoss(nn.Module):
    """Kozachenko-Leonenko entropy estimator used as a loss.

    ``loss = -mean_i log(||x_i - x_nn(i)|| + eps)`` where the ``x`` are L2-normalised and ``nn(i)`` is the
    neighbour with the largest dot product other than ``i`` itself. Computed in fp32.
    """

    def __init__(self, eps: float = 1e-8) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, features: Tensor) -> Tensor:
        """Args: features (N, C) with N >= 2. Returns a scalar."""
        if features.dim() != 2 or features.shape[0] < 2:
            raise ValueError(f'KoLeoLoss needs (N >= 2, C) features, got shape {tuple(features.shape)}; '
                             'use a per-view batch size of at least 2.')
        x = F.normalize(features.float(), dim=-1, eps=self.eps)
        with torch.no_grad():
            dots = x @ x.t()
            dots.fill_diagonal_(-float('inf'))
            neighbour = dots.argmax(dim=1)
        distances = (x - x[neighbour]).norm(dim=-1)
        return -torch.log(distances + self.eps).mean()
