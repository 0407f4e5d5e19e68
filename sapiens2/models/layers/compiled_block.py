"""Runs transformer blocks through ``torch.compile``, falling back to eager when compiling fails."""
import warnings
from typing import Callable, Optional

import torch
from torch import nn

from .attention import QKVWeights
from .rope import RopeTables

_COMPILED: Optional[Callable] = None


def _call_block(block: nn.Module, x: torch.Tensor, rope: Optional[RopeTables],
                qkv: Optional[QKVWeights]) -> torch.Tensor:
    return block(x, rope, qkv)


def compiled_call_block() -> Callable:
    """The process-wide compiled ``block(x, rope, qkv)``: every block of the same structure reuses its graph.

    Inductor is asked to round where eager rounds (``emulate_precision_casts``), so the bf16 RoPE flow of the
    official code survives fusion.
    """
    global _COMPILED
    if _COMPILED is None:
        import torch._inductor.config as inductor_config
        options = {'emulate_precision_casts': True} if hasattr(inductor_config, 'emulate_precision_casts') else {}
        _COMPILED = torch.compile(_call_block, options=options)
    return _COMPILED


class CompiledBlockRunner:
    """Callable ``runner(block, x, rope, qkv=None)`` that runs ``block`` compiled.

    If the compiled call raises and the eager call of the same input succeeds, compiling is at fault (no C++
    compiler, an unsupported op or platform): it warns once and runs every later call eagerly. An error that eager
    raises too is the input's and propagates unchanged.
    """

    def __init__(self) -> None:
        self.failed = False

    def __call__(self, block: nn.Module, x: torch.Tensor, rope: Optional[RopeTables] = None,
                 qkv: Optional[QKVWeights] = None) -> torch.Tensor:
        if self.failed:
            return block(x, rope, qkv)
        try:
            return compiled_call_block()(block, x, rope, qkv)
        except Exception as error:  # any compile failure falls back; eager re-raises input errors
            out = block(x, rope, qkv)
            self.failed = True
            warnings.warn(f'Sapiens2(compile=True): torch.compile failed ({type(error).__name__}: '
                          f'{str(error).splitlines()[0] if str(error) else ""}); running the blocks eagerly.',
                          RuntimeWarning, stacklevel=2)
            return out
