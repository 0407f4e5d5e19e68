"""LayerScale: a learned per-channel gain on a residual branch."""
import torch
from torch import nn


class LayerScale(nn.Module):
    """Multiplies the last dimension by a learned vector (key ``weight``, init ``init_value``)."""

    def __init__(self, dim: int, init_value: float = 1e-4) -> None:
        super().__init__()
        self.init_value = init_value
        self.weight = nn.Parameter(torch.full((dim, ), float(init_value)))

    def reset_parameters(self) -> None:
        nn.init.constant_(self.weight, self.init_value)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight
