"""What ``import sapiens2`` does: apply the adaptations and register sapiens2's modules, each part when it is needed.

The adaptations (:mod:`sapiens2.adaptations`) change MMEngine and the OpenMMLab libraries; the registering modules put
sapiens2's components into the registries (:mod:`sapiens2.registry` says which holds what). They come in parts
(:data:`PARTS`): ``core`` (the backbone, the dense heads, the engine, data and drawing: torch, MMEngine, mmcv),
``pose`` (mmpose's registries) and ``seg`` (mmseg's). ``import sapiens2`` registers the core and leaves pose and
segmentation to the first lookup in an mmpose or mmseg registry (the ``register-on-lookup`` adaptation calls
:func:`register_for_scope`), so a pose run never imports mmseg nor a dense run mmpose, and a config built through
mmpose or mmseg (its ``default_scope``, or a ``mmseg.`` type prefix) still finds every sapiens2 module.
:func:`register_all_modules` registers every part at once. The console scripts import the package without any of
this (:mod:`sapiens2_entry`) and call :func:`register_modules` before they build a model.
"""
import importlib
from typing import Dict, Iterable, Tuple

from sapiens2.utils.optional import is_installed

#: Modules that register, per part, with the library each part needs beyond torch and MMEngine. A package listed
#: with a trailing ``.*`` also loads its lazy exports (PEP 562 ``__all__``).
PARTS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    'core': ('', ('sapiens2.engine.dist.*', 'sapiens2.engine.hooks.*', 'sapiens2.engine.*', 'sapiens2.hub.*',
                  'sapiens2.structures.*', 'sapiens2.models', 'sapiens2.evaluation')),
    'data': ('mmcv', ('sapiens2.datasets', 'sapiens2.visualization', 'sapiens2.apis.save_predictions_hook')),
    'pose': ('mmpose', ('sapiens2.models.heads.pose_heatmap_head', 'sapiens2.codecs', 'sapiens2.datasets.pose',
                        'sapiens2.evaluation.keypoint_format_coco_metric',
                        'sapiens2.evaluation.keypoint_threshold_metric')),
    'seg': ('mmseg', ('sapiens2.models.heads.seg_head', 'sapiens2.models.estimators.seg_tta_model',
                      'sapiens2.models.losses.seg_cross_entropy_loss', 'sapiens2.models.losses.seg_dice_loss',
                      'sapiens2.datasets.seg')),
}
#: The parts a lookup in a registry of this scope needs (any other scope: the core and data parts).
SCOPE_PARTS = {'mmpose': ('core', 'data', 'pose'), 'mmseg': ('core', 'data', 'seg')}
BASE_PARTS = ('core', 'data')

_registered: Dict[str, bool] = {}


def register_modules(parts: Iterable[str] = BASE_PARTS) -> None:
    """Apply the adaptations (once per process), then import the registering modules of ``parts`` (see
    :data:`PARTS`) whose library is installed; a part registers once, later calls do nothing."""
    from sapiens2.adaptations import REGISTRY_LOOKUP_HOOKS, apply_adaptations
    apply_adaptations()
    if register_for_scope not in REGISTRY_LOOKUP_HOOKS:
        REGISTRY_LOOKUP_HOOKS.append(register_for_scope)
    for part in parts:
        if part in _registered:
            continue
        _registered[part] = True  # first: a module of the part may look a name up while it is imported
        library, modules = PARTS[part]
        if library and not is_installed(library):
            continue
        for name in modules:
            package = importlib.import_module(name.removesuffix('.*'))
            if name.endswith('.*'):
                for public in getattr(package, '__all__', ()):
                    getattr(package, public)  # a lazy export (PEP 562) imports its module here


def register_for_scope(scope: str) -> None:
    """Register the parts a lookup in a registry of ``scope`` needs (:data:`SCOPE_PARTS`); called by the
    ``register-on-lookup`` adaptation before MMEngine searches a registry."""
    parts = SCOPE_PARTS.get(scope, BASE_PARTS)
    if not all(part in _registered for part in parts):
        register_modules(parts)


def register_all_modules() -> None:
    """Apply the adaptations and register every part now (once per process; later calls do nothing).

    ``import sapiens2`` registers the pose and segmentation parts on first use, which is enough to build any config;
    this is for code that reads the registries' contents directly (``registry.module_dict``).
    """
    register_modules(PARTS)
