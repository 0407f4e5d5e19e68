"""Whether the 16-bit floats of a checkpoint are what its header says they are.

A ``.safetensors`` header that labels F16 data as BF16 (or the reverse) passes every size check: both are two bytes
a value. Read as BF16, F16 weights get exponents far outside any trained network's (a weight of 0.01 becomes about
1e-20) and the model predicts garbage without an error. The bytes can be read either way, so
:func:`mislabelled_half_tensors` compares the two readings of each tensor on a sample of its values: a tensor is
mislabelled when most of its non-zero values are implausible (non-finite, below 1e-10 or above 1e10 in magnitude)
as labelled and almost none are as the other type. Genuine weights of either type are almost all within
[1e-10, 1e10] (BF16 has FP32's range; F16 cannot hold values outside [6e-8, 65504] at all). BF16 data labelled F16
reads as values of about 1 to 4 that no magnitude test tells from weights: that direction is not detected.
"""
from typing import Dict, List, Mapping, Optional

import torch

#: Values sampled per tensor, and the fractions of implausible values that decide.
SAMPLE = 4096
AS_LABELLED, AS_OTHER = 0.5, 0.05
_OTHER = {torch.bfloat16: torch.float16, torch.float16: torch.bfloat16}
_NAMES = {torch.bfloat16: 'BF16', torch.float16: 'F16'}


def _implausible_fraction(values: torch.Tensor) -> Optional[float]:
    values = values.float()
    nonzero = values[values != 0]
    if nonzero.numel() < 16:
        return None
    magnitude = nonzero.abs()
    bad = ~torch.isfinite(nonzero) | (magnitude < 1e-10) | (magnitude > 1e10)
    return float(bad.float().mean())


def mislabelled_half_tensors(state_dict: Mapping[str, torch.Tensor]) -> Dict[str, str]:
    """{name: what its bytes are} of the BF16/F16 tensors whose values are implausible as labelled and plausible as
    the other 16-bit type."""
    found = {}
    for name, tensor in state_dict.items():
        if tensor.dtype not in _OTHER or tensor.numel() < 16:
            continue
        flat = tensor.detach().reshape(-1)
        sample = flat[::max(1, flat.numel() // SAMPLE)].contiguous()
        labelled, other = _implausible_fraction(sample), _implausible_fraction(sample.view(_OTHER[tensor.dtype]))
        if labelled is not None and other is not None and labelled > AS_LABELLED and other < AS_OTHER:
            found[name] = _NAMES[_OTHER[tensor.dtype]]
    return found


def check_half_precision_labels(state_dict: Mapping[str, torch.Tensor], path: str) -> None:
    """Raise ``ValueError`` naming the tensors of ``path`` whose header dtype is not the type of their bytes."""
    found = mislabelled_half_tensors(state_dict)
    if not found:
        return
    names: List[str] = list(found)
    label = _NAMES[state_dict[names[0]].dtype]
    shown = ', '.join(names[:3]) + (f' ... ({len(names)} tensors)' if len(names) > 3 else '')
    raise ValueError(f'{path}: the header labels {shown} {label}, but their bytes are {found[names[0]]} values '
                     f'(read as {label}, most are below 1e-10 or non-finite); the file was written with a wrong '
                     f'dtype: write it again from the original weights (tools/convert_checkpoint.py)')
