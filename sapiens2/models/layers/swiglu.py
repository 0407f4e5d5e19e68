"""SwiGLU feed-forward network."""
import torch
import torch.nn.functional as F
from torch import nn


class SwiGLUFFN(nn.Module):
    """``w3(silu(a) * b)`` where ``[a, b] = w12(x)``: the first half of ``w12``'s output is the gate.

    The hidden width is ``hidden_dims`` as given (Sapiens2 uses the full 4C, no 2/3 scaling).
    """

    def __init__(self, embed_dims: int, hidden_dims: int, bias: bool = True) -> None:
        super().__init__()
        self.w12 = nn.Linear(embed_dims, 2 * hidden_dims, bias=bias)
        self.w3 = nn.Linear(hidden_dims, embed_dims, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, value = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(gate) * value)
