"""``AmpOptimWrapper`` that also runs without a GPU (bf16 autocast on the CPU, no loss scaling)."""
import torch
from mmengine.logging import print_log
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from mmengine.registry import OPTIM_WRAPPERS

from .env import has_accelerator


@OPTIM_WRAPPERS.register_module()
class Sapiens2AmpOptimWrapper(AmpOptimWrapper):
    """MMEngine's ``AmpOptimWrapper`` on a GPU; on a CPU, bf16 autocast with a disabled (identity) grad scaler.

    MMEngine's class asserts that an accelerator exists. On the CPU only bfloat16 autocast is supported, so a
    requested float16 falls back to bfloat16 with a log message; bf16 needs no loss scaling.
    """

    def __init__(self, loss_scale: str | float | dict = 'dynamic', dtype: str | torch.dtype | None = None,
                 use_fsdp: bool = False, **kwargs):
        if has_accelerator():
            super().__init__(loss_scale=loss_scale, dtype=dtype, use_fsdp=use_fsdp, **kwargs)
            return
        # The parent's __init__ asserts a GPU; set up the same attributes for the CPU instead.
        OptimWrapper.__init__(self, **kwargs)
        if dtype not in (None, 'bfloat16', torch.bfloat16):
            print_log(f'AMP dtype {dtype} is not supported on the CPU; using bfloat16.', logger='current')
        self.cast_dtype = torch.bfloat16
        self._scale_update_param = None
        self.loss_scaler = torch.amp.GradScaler('cpu', enabled=False)
