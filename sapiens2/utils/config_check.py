"""Early checks of a config: ``type`` names with close-name suggestions for typos, and a strategy without its runner.

MMEngine reports an unknown type only when that module is built, deep inside runner construction, and without
suggestions. :func:`check_config_types` walks the whole config up front and raises :class:`UnknownTypeError` naming
each unknown type, where it is (dotted key path), and the closest registered names (difflib). MMEngine's ``Runner``
silently ignores a ``strategy`` (e.g. FSDP), which only ``FlexibleRunner`` uses: :func:`check_strategy_runner`.
"""
import contextlib
import difflib
import sys
from collections.abc import Iterator, Mapping

from mmengine.config import Config
from mmengine.registry import RUNNERS, Registry
from mmengine.runner import FlexibleRunner

REGISTRY_MODULES = ('mmengine.registry', 'mmpose.registry', 'mmseg.registry', 'mmdet.registry',
                    'sapiens2.registry')


class UnknownTypeError(ValueError):
    """A config names a ``type`` that no registry knows."""


def check_config(cfg: Config) -> None:
    """All checks of this module (called by ``tools/train.py`` and ``tools/test.py`` after loading a config)."""
    check_config_types(cfg)
    check_strategy_runner(cfg)


def check_strategy_runner(cfg: Config | Mapping) -> None:
    """Raise ``ValueError`` if the config sets a ``strategy`` but its ``runner_type`` is not a ``FlexibleRunner``."""
    runner_type = cfg.get('runner_type', 'Runner')
    runner = RUNNERS.get(runner_type) if isinstance(runner_type, str) else runner_type
    if cfg.get('strategy') and runner is not None and not issubclass(runner, FlexibleRunner):
        source = getattr(cfg, 'filename', None) or '<config>'
        raise ValueError(f"{source}: strategy={cfg['strategy'].get('type')} is ignored by runner_type="
                         f"'{runner_type}'; only FlexibleRunner uses strategies. Set runner_type = 'FlexibleRunner' "
                         "(see configs/_base_/strategies/fsdp.py) or remove the strategy.")


def check_config_types(cfg: Config | Mapping) -> None:
    """Raise :class:`UnknownTypeError` if a ``type`` (or ``runner_type``) in ``cfg`` is in no registry."""
    found = list(_iter_types(cfg.to_dict() if isinstance(cfg, Config) else cfg))
    unknown = _unknown(found, registered_names(import_locations=False))
    if unknown:  # maybe registered lazily: import every registry's locations, then look again
        known = registered_names(import_locations=True)
        unknown = _unknown(unknown, known)
    if unknown:
        source = getattr(cfg, 'filename', None) or '<config>'
        lines = [f"  {path} = '{name}'{_suggest(_strip_scope(name), known)}" for path, name in unknown]
        raise UnknownTypeError(f'Unknown type name(s) in {source}:\n' + '\n'.join(lines) +
                               '\nFix the spelling, or add the package that registers it to custom_imports.')


def registered_names(import_locations: bool = True) -> set[str]:
    """All names in every registry reachable from the loaded OpenMMLab/sapiens2 registry modules.

    With ``import_locations`` the registries first import their lazy locations (as MMEngine does before a build);
    a location that fails to import is skipped (its build would report it).
    """
    names: set[str] = set()
    for registry in _all_registries():
        if import_locations:
            with contextlib.suppress(ImportError):
                registry.import_from_location()
        names.update(registry.module_dict)
    return names


def _unknown(found: list[tuple[str, str]], known: set[str]) -> list[tuple[str, str]]:
    return [(path, name) for path, name in found if _strip_scope(name) not in known]


def _all_registries() -> list[Registry]:
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


# Keys whose values are data, not module configs (mmpose's dataset_info has keypoint `type`s 'upper'/'lower').
_DATA_KEYS = ('dataset_info', 'metainfo')


def _iter_types(node, path: str = '') -> Iterator[tuple[str, str]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            child = f'{path}.{key}' if path else str(key)
            if key in _DATA_KEYS:
                continue
            if key in ('type', 'runner_type') and isinstance(value, str):
                yield child, value
            else:
                yield from _iter_types(value, child)
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _iter_types(value, f'{path}[{i}]')


def _strip_scope(name: str) -> str:
    """'mmseg.PhotoMetricDistortion' -> 'PhotoMetricDistortion' (scope prefixes are resolved by MMEngine)."""
    return name.rsplit('.', 1)[-1]


def _suggest(name: str, known: set[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if not close:
        close = [k for k in known if k.lower() == name.lower()]
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ' (no similar registered name)'
