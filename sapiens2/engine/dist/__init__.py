"""CPU-safe distributed training on MMEngine: process group set-up, model wrappers, strategies, AMP."""
from .amp import Sapiens2AmpOptimWrapper
from .env import has_accelerator, init_distributed
from .fsdp_policies import checkpoint_modules_by_class_name, wrap_modules_by_class_name
from .strategies import Sapiens2DDPStrategy, Sapiens2FSDPStrategy
from .wrappers import Sapiens2DistributedDataParallel, Sapiens2FullyShardedDataParallel

__all__ = [
    'init_distributed', 'has_accelerator', 'Sapiens2DistributedDataParallel', 'Sapiens2FullyShardedDataParallel',
    'Sapiens2DDPStrategy', 'Sapiens2FSDPStrategy', 'Sapiens2AmpOptimWrapper', 'wrap_modules_by_class_name',
    'checkpoint_modules_by_class_name'
]
