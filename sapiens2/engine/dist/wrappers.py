"""MMEngine DDP/FSDP model wrappers that accept modules living on the CPU.

MMEngine passes ``device_ids=[LOCAL_RANK]`` to DDP and ``device_id=LOCAL_RANK`` to FSDP; torch rejects both for CPU
modules. On a GPU these classes behave exactly like their MMEngine parents.
"""
import torch
import torch.nn as nn
from mmengine.logging import print_log
from mmengine.model.wrappers import MMDistributedDataParallel, MMFullyShardedDataParallel
from mmengine.registry import MODEL_WRAPPERS

from .env import has_accelerator


def _on_cpu(module: nn.Module) -> bool:
    param = next(module.parameters(), None)
    return param is None or param.device.type == 'cpu'


@MODEL_WRAPPERS.register_module()
class Sapiens2DistributedDataParallel(MMDistributedDataParallel):
    """``MMDistributedDataParallel`` that drops ``device_ids``/``output_device`` for CPU modules (gloo)."""

    def __init__(self, module: nn.Module, detect_anomalous_params: bool = False, **kwargs):
        if _on_cpu(module):
            kwargs.update(device_ids=None, output_device=None)
        super().__init__(module, detect_anomalous_params=detect_anomalous_params, **kwargs)


@MODEL_WRAPPERS.register_module()
class Sapiens2FullyShardedDataParallel(MMFullyShardedDataParallel):
    """``MMFullyShardedDataParallel`` that shards on the CPU when there is no GPU.

    Without a GPU ``device_id`` becomes ``'cpu'`` and ``mixed_precision`` is dropped (bf16 compute is a GPU feature
    here; CPU runs are for correctness checks in fp32).
    """

    def __init__(self, module: nn.Module, device_id: int | torch.device | None = None,
                 mixed_precision: dict | None = None, **kwargs):
        if not has_accelerator():
            device_id = torch.device('cpu')
            if mixed_precision is not None:
                print_log('FSDP mixed_precision is ignored without a GPU; training in fp32.', logger='current')
                mixed_precision = None
        super().__init__(module, device_id=device_id, mixed_precision=mixed_precision, **kwargs)
