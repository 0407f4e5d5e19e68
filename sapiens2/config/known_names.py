"""The names a config may use, shared by its checks: registered ``type`` names, the top-level keys the runners and
sapiens2 read, and the keys whose values are data."""
import contextlib
import inspect
import sys
from typing import Callable, Optional

from mmengine.registry import Registry
from mmengine.runner import FlexibleRunner, Runner

REGISTRY_MODULES = ('mmengine.registry', 'mmpose.registry', 'mmseg.registry', 'mmdet.registry',
                    'sapiens2.registry')
# Keys whose values are data, not module configs (mmpose's dataset_info has keypoint `type`s 'upper'/'lower').
DATA_KEYS = ('dataset_info', 'metainfo')

#: Top-level keys read by sapiens2 besides the Runner's arguments, with the types they take.
SAPIENS2_KEYS = {'runner_type': (str, type), 'custom_imports': (dict, ), 'load_strict': (bool, ),
                 'trust_checkpoint': (bool, ), 'allow_non_finite_weights': (bool, ), 'model_wrapper_cfg': (dict, ),
                 'infer_task': (dict, ), 'custom_metainfo': (str, ), 'custom_data_root': (str, )}
_KEY_TYPES = {'model': (dict, ), 'work_dir': (str, ), 'load_from': (str, ), 'resume': (bool, ), 'launcher': (str, ),
              'default_scope': (str, ), 'experiment_name': (str, ), 'log_level': (str, int), 'randomness': (dict, ),
              'param_scheduler': (dict, list), 'custom_hooks': (list, ), 'compile': (bool, dict)}


def runner_keys() -> dict[str, tuple]:
    """The top-level keys the Runners and sapiens2 read -> the value types each takes (dict unless said)."""
    names = {name for runner in (Runner, FlexibleRunner) for name in inspect.signature(runner.__init__).parameters}
    keys = {name: _KEY_TYPES.get(name, (dict, )) for name in sorted(names - {'self', 'cfg'})}
    return {**keys, **SAPIENS2_KEYS}


def all_registries() -> list[Registry]:
    """Every registry of the loaded OpenMMLab/sapiens2 registry modules (:data:`REGISTRY_MODULES`) and their
    children."""
    roots = [obj for mod_name in REGISTRY_MODULES if mod_name in sys.modules
             for obj in vars(sys.modules[mod_name]).values() if isinstance(obj, Registry)]
    seen: dict[int, Registry] = {}
    stack = roots
    while stack:
        registry = stack.pop()
        if id(registry) not in seen:
            seen[id(registry)] = registry
            stack.extend(registry.children.values())
    return list(seen.values())


def strip_scope(name: str) -> str:
    """'mmseg.PhotoMetricDistortion' -> 'PhotoMetricDistortion' (scope prefixes are resolved by MMEngine)."""
    return name.rsplit('.', 1)[-1]


def registered_names(import_locations: bool = True) -> set[str]:
    """All names in every registry reachable from the loaded OpenMMLab/sapiens2 registry modules.

    With ``import_locations`` the registries first import their lazy locations (as MMEngine does before a build);
    a location that fails to import is skipped (its build would report it). The inferencer registries are not among
    them: a config never names an inferencer, and mmpose's imports its APIs and mmdet.
    """
    names: set[str] = set()
    for registry in all_registries():
        if import_locations and registry.name != 'inferencer':
            with contextlib.suppress(ImportError):
                registry.import_from_location()
        names.update(registry.module_dict)
    return names


def registered_objects(type_: object, scope: Optional[str]) -> list[Callable]:
    """The classes (or functions) a ``type`` may name: those of the config's scope (or of the ``scope.`` prefix),
    else MMEngine's, else any registry's (every one when several registries of that scope hold the name)."""
    if not isinstance(type_, str):
        return [type_] if callable(type_) else []
    if '.' in type_:
        scope = type_.rsplit('.', 1)[0]
    name = strip_scope(type_)
    holding = [registry for registry in all_registries() if name in registry.module_dict]
    for preferred in (scope, 'mmengine', None):
        chosen = [r for r in holding if preferred is None or r.scope == preferred]
        if chosen:
            return list({id(obj): obj for obj in (r.module_dict[name] for r in chosen)}.values())
    return []
