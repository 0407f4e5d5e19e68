"""Training and checkpoints: CPU-safe DDP/FSDP/AMP (``dist``), hooks, the checkpoint loader, the layer-decay
optimizer constructor and the runner. The names load on first use (PEP 562); ``import sapiens2`` registers them."""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'CheckpointMismatchError': '.checkpoint', 'load_model_weights': '.checkpoint', 'load_weights': '.checkpoint',
    'read_checkpoint_file': '.checkpoint', 'save_weights': '.checkpoint',
    'Sapiens2LayerDecayOptimWrapperConstructor': '.optimizers', 'Sapiens2Runner': '.runner'
})

__all__ = [
    'CheckpointMismatchError', 'load_model_weights', 'load_weights', 'read_checkpoint_file', 'save_weights',
    'Sapiens2LayerDecayOptimWrapperConstructor', 'Sapiens2Runner'
]
