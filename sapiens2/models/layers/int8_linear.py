"""Linear layers in int8 for CPU inference, in one of two kernels (``KERNELS``; :func:`quantize_linears`).

``'int_mm'`` (:class:`Int8Linear`, CPUs with VNNI or AMX int8): int8 weights per output channel, int8 activations
per token, both scales symmetric (absmax / 127); the product runs as an int8 x int8 -> int32 matrix multiply
(``torch._int_mm``). Per-token activation scales keep the error near bf16's on transformer activations, whose
magnitude varies by token. Fast only with the blocks compiled (``Sapiens2(compile=True)``), where inductor fuses the
quantization and the rescale into the surrounding kernels.

``'fbgemm'`` (:class:`TokenScaledInt8Linear`, AVX2 CPUs without VNNI, where ``torch._int_mm`` has no fast kernel):
torch's own dynamic int8 linear layers (``torch.ao.nn.quantized.dynamic``, fbgemm's AVX2 kernels) on tokens scaled
to one range: int8 weights per output channel, activations quantized per call to 7-bit unsigned integers (fbgemm's
``reduce_range``, so that AVX2's 16-bit sums of products cannot saturate). Fast eager: no compiling.
docs/performance.md has the figures of both.
"""
import warnings

import torch
from torch import nn

#: The int8 range used on both sides (symmetric: -127..127).
INT8_MAX = 127.0


def quantize_rows(x: torch.Tensor) -> tuple:
    """``x`` (M, K) as int8 with one scale per row: (int8 (M, K), fp32 scales (M, 1))."""
    scale = x.abs().amax(dim=-1, keepdim=True).float().clamp_min(1e-12) / INT8_MAX
    return torch.round(x.float() / scale).clamp(-INT8_MAX, INT8_MAX).to(torch.int8), scale


class Int8Linear(nn.Module):
    """Inference-only replacement of an ``nn.Linear`` (:func:`quantize_linears` builds it from one)."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        weight, scale = quantize_rows(linear.weight.detach())  # (N, K) int8, (N, 1)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.register_buffer('weight_t', weight.t().contiguous())  # (K, N): _int_mm's right operand
        self.register_buffer('weight_scale', scale.t().contiguous())  # (1, N)
        bias = linear.bias.detach().float() if linear.bias is not None else None
        self.register_buffer('bias', bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features)  # (M, K)
        values, scale = quantize_rows(rows)
        out = torch._int_mm(values, self.weight_t).float() * (scale * self.weight_scale)  # (M, N)
        if self.bias is not None:
            out = out + self.bias
        return out.to(x.dtype).reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f'in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}'


#: The int8 kernels of :func:`quantize_linears` (:func:`sapiens2.utils.devices.int8_kernel` picks one per CPU).
KERNELS = ('int_mm', 'fbgemm')


def quantize_linears(module: nn.Module, kernel: str = 'int_mm') -> int:
    """Replace every ``nn.Linear`` inside ``module`` by its int8 version of ``kernel`` (:data:`KERNELS`), in place;
    returns how many."""
    if kernel not in KERNELS:
        raise ValueError(f'int8 kernel {kernel!r} is not one of {", ".join(KERNELS)}')
    count = 0
    for name, child in module.named_children():
        if isinstance(child, nn.Linear):
            setattr(module, name, Int8Linear(child) if kernel == 'int_mm' else TokenScaledInt8Linear(child))
            count += 1
        else:
            count += quantize_linears(child, kernel)
    return count


class TokenScaledInt8Linear(nn.Module):
    """torch's dynamic int8 linear layer (fbgemm, weights per output channel) on tokens scaled to one range.

    fbgemm quantizes its input with one scale per call; tokens of very different sizes (the SwiGLU product that
    ``w3`` reads) then lose the small ones (pose-tiny's heatmaps: 9 % relative L2 error against fp32, 1.1 % with
    ``w3`` left in fp32). Each token is divided by its absmax before and multiplied by it after (exact for a linear
    map without bias; the bias is added after), so the per-call scale acts per token, as in :class:`Int8Linear`.
    """

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear
        from torch.ao.quantization import per_channel_dynamic_qconfig
        self.in_features, self.out_features = linear.in_features, linear.out_features
        bias = linear.bias.detach().float() if linear.bias is not None else None
        self.register_buffer('bias', bias)
        plain = nn.Linear(linear.in_features, linear.out_features, bias=False)
        plain.weight = linear.weight
        plain.qconfig = per_channel_dynamic_qconfig
        with warnings.catch_warnings():  # torch 2.14 says quantized tensors move to torchao (not a dependency)
            warnings.filterwarnings('ignore', message='torch.quantize_per_tensor, torch.quantize_per_channel')
            self.linear = DynamicLinear.from_float(plain)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = x.abs().amax(dim=-1, keepdim=True).float().clamp_min(1e-12)
        out = self.linear((x.float() / scale)) * scale
        if self.bias is not None:
            out = out + self.bias
        return out.to(x.dtype)

    def extra_repr(self) -> str:
        return f'in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}'
