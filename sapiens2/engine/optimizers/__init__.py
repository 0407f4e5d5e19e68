from .layer_decay_constructor import (LayerDecayOptimWrapperConstructor, clean_param_name, get_layer_id,
                                      original_shapes)

__all__ = ['LayerDecayOptimWrapperConstructor', 'clean_param_name', 'get_layer_id', 'original_shapes']
