"""The backbone and the shared engine modules are found from every scope (see sapiens2/registry.py)."""
import importlib

import pytest
from mmengine.registry import DefaultScope

import sapiens2  # noqa: F401
from sapiens2.models import Sapiens2


@pytest.mark.parametrize('scope,registry_module', [('mmpose', 'mmpose.registry'), ('mmseg', 'mmseg.registry'),
                                                   ('sapiens2', 'sapiens2.registry')])
def test_backbone_and_constructor_build_from_every_scope(scope, registry_module):
    registries = importlib.import_module(registry_module)
    with DefaultScope.overwrite_default_scope(scope):
        backbone = registries.MODELS.build(dict(type='Sapiens2', arch='sapiens2_nano', img_size=(32, 32)))
        assert isinstance(backbone, Sapiens2)
        assert registries.OPTIM_WRAPPER_CONSTRUCTORS.get('Sapiens2LayerDecayOptimWrapperConstructor') is not None


def test_sapiens2_scope_is_a_child_of_the_mmengine_root():
    from mmengine.registry import MODELS as ROOT

    from sapiens2.registry import MODELS
    assert MODELS.parent is ROOT and MODELS.scope == 'sapiens2'
    assert ROOT.get('Sapiens2') is Sapiens2


def test_layer_decay_constructor_does_not_shadow_mmposes():
    import mmpose.engine.optim_wrappers  # noqa: F401  (registers mmpose's ViTPose-style constructor)
    from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS

    from sapiens2.engine.optimizers import Sapiens2LayerDecayOptimWrapperConstructor
    ours = OPTIM_WRAPPER_CONSTRUCTORS.get('Sapiens2LayerDecayOptimWrapperConstructor')
    assert ours is Sapiens2LayerDecayOptimWrapperConstructor
    assert OPTIM_WRAPPER_CONSTRUCTORS.get('LayerDecayOptimWrapperConstructor') is not ours
