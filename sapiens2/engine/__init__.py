from . import dist, hooks  # noqa: F401  (CPU-safe DDP/FSDP/AMP, hooks)
from .checkpoint import CheckpointMismatchError, load_model_weights, load_weights, read_checkpoint_file, save_weights
from .optimizers import Sapiens2LayerDecayOptimWrapperConstructor
from .runner import Sapiens2Runner

__all__ = [
    'CheckpointMismatchError', 'load_model_weights', 'load_weights', 'read_checkpoint_file', 'save_weights',
    'Sapiens2LayerDecayOptimWrapperConstructor', 'Sapiens2Runner'
]
