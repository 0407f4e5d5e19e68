"""CPU-safe distributed training on MMEngine: process group set-up, model wrappers, strategies, AMP."""
from .amp import Sapiens2AmpOptimWrapper
from .env import DEFAULT_TIMEOUT_S, has_accelerator, init_distributed
from .fsdp_policies import checkpoint_modules_by_class_name, wrap_modules_by_class_name
from .heartbeat import RankTimeoutError, name_unresponsive_ranks
from .strategies import Sapiens2DDPStrategy, Sapiens2FSDPStrategy
from .wrappers import Sapiens2DistributedDataParallel, Sapiens2FullyShardedDataParallel

__all__ = [
    'init_distributed', 'has_accelerator', 'DEFAULT_TIMEOUT_S', 'RankTimeoutError', 'name_unresponsive_ranks',
    'Sapiens2DistributedDataParallel', 'Sapiens2FullyShardedDataParallel', 'Sapiens2DDPStrategy',
    'Sapiens2FSDPStrategy', 'Sapiens2AmpOptimWrapper', 'wrap_modules_by_class_name', 'checkpoint_modules_by_class_name'
]
