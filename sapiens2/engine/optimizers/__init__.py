from .layer_decay_constructor import (
                                      Sapiens2LayerDecayOptimWrapperConstructor,
                                      clean_param_name,
                                      get_layer_id,
                                      original_shapes,
)

__all__ = ['Sapiens2LayerDecayOptimWrapperConstructor', 'clean_param_name', 'get_layer_id', 'original_shapes']
