from .layer_decay_constructor import (LayerDecayOptimWrapperConstructor, clean_param_name, get_layer_id,
                                      original_shapes)

# mmpose force-registers its own (ViTPose-style) LayerDecayOptimWrapperConstructor into the root registry when
# mmpose.engine is imported, which happens lazily at the first mmpose-scope lookup. Import it now and re-register
# ours, so the name means the Sapiens2 rule in every scope.
import mmpose.engine.optim_wrappers  # noqa: E402,F401
from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS  # noqa: E402

OPTIM_WRAPPER_CONSTRUCTORS.register_module(module=LayerDecayOptimWrapperConstructor, force=True)

__all__ = ['LayerDecayOptimWrapperConstructor', 'clean_param_name', 'get_layer_id', 'original_shapes']
