"""``nn.RMSNorm`` that stays on torch's fused kernel under autocast."""
import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.RMSNorm):
    """``nn.RMSNorm`` (same keys and fp32 numerics) whose scale is cast to a lower-precision input's dtype.

    Under bf16 autocast a norm of a bf16 activation (QK-norm after the q/k projections, a head's norm after a conv)
    would meet an fp32 weight, which sends ``rms_norm`` to its slower unfused fallback ("Mismatch dtype between input
    and weight") and computes there in fp32; with the weight cast it runs the fused kernel in the input's dtype
    (statistics accumulated in fp32). fp32 inputs, e.g. the residual stream, are normed exactly as before.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        if weight is not None and weight.dtype != x.dtype and x.dtype in (torch.bfloat16, torch.float16):
            weight = weight.to(x.dtype)
        return F.rms_norm(x, self.normalized_shape, weight, self.eps)
