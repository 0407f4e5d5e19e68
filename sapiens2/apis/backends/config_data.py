"""A bundle's config read as data, never run.

A bundle is a folder users download and share. MMEngine's ``Config.fromfile`` executes a ``.py`` config, so a
bundle whose ``config.py`` began ``_x = __import__('os').system(...)`` ran that command on load. Export writes the
config with ``Config.dump``; :func:`read_config_data` reads exactly what it writes, as data
(:mod:`sapiens2.config.literals`); anything else is one :class:`~.bundle.BundleError` line
naming the file, the line and what was found. :func:`load_bundle_config` builds the ``mmengine.Config`` from it,
after checking that every ``type`` names a registered class: MMEngine's registries import and call any other
dotted name (``type='subprocess.getoutput', cmd=...``), which would run code from data. Its ``custom_imports`` import
only sapiens2 and the sapiens2 project packages (``sapiens2_<project>``, what export writes there): any other name
(``this``, ``setup``, a module beside the bundle) is refused before anything is imported, since importing a module
runs it.
"""
import importlib.util
import os.path as osp
import re
import sys
from typing import TYPE_CHECKING, Any, Iterator, Set

from sapiens2.config.literals import ConfigNotDataError, config_values

from .bundle_error import BundleError

if TYPE_CHECKING:
    from mmengine.config import Config

#: The modules a bundle's ``custom_imports`` may name: ``sapiens2`` and the project packages ``sapiens2_<project>``
#: (projects/*/sapiens2_*), and their sub-modules.
IMPORTABLE = re.compile(r'sapiens2(_[a-z0-9]+)?(\.[A-Za-z_][A-Za-z0-9_]*)*')
#: Keys a config's own layout is given by (:mod:`sapiens2.config.custom_layout`); export applied them already.
LAYOUT_KEYS = ('custom_metainfo', 'custom_data_root')


def read_config_data(path: str) -> dict:
    """The top-level values of the config file ``path``, read without running it
    (:func:`~sapiens2.config.literals.config_values`); :class:`BundleError` (one line) for a file that is not
    what ``Config.dump`` writes."""
    try:
        with open(path, encoding='utf-8') as f:
            return config_values(f.read(), path)
    except UnicodeDecodeError as err:
        problem = f'{path}: not a config ({err})'
    except ConfigNotDataError as err:
        problem = str(err)
    raise BundleError(f"{problem}; a bundle's config is read as data and never run (only `name = value` lines of "
                      'literals and dict(...), as export writes them): export the bundle again with '
                      'tools/deploy/export.py')


def load_bundle_config(path: str, folder: str) -> 'Config':
    """The ``mmengine.Config`` of a bundle's config file (:func:`read_config_data`). Its ``custom_imports`` are
    imported as ``Config.fromfile`` imports them, when they are sapiens2 or its installed project packages
    (:data:`IMPORTABLE`, not files of the bundle; all are checked before the first is imported); its
    ``custom_metainfo`` layout is dropped: export wrote it into the model, and the file it names is code."""
    from mmengine.config import Config
    values = read_config_data(path)
    for key in LAYOUT_KEYS:
        values.pop(key, None)
    imports = values.get('custom_imports', {})
    names = imports.get('imports', []) if isinstance(imports, dict) else None
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise BundleError(f'{path}: custom_imports is {imports!r}, not dict(imports=[module names]); export the '
                          'bundle again with tools/deploy/export.py')
    for name in names:
        _check_importable(name, path, folder)
    for name in names:
        importlib.import_module(name)
    _check_types(values, path)
    return Config(values, filename=path)


def _check_importable(name: str, path: str, folder: str) -> None:
    """A :class:`BundleError` unless the module ``name`` of ``custom_imports`` is sapiens2 or one of its installed
    project packages (:data:`IMPORTABLE`), outside the bundle folder. Imports nothing but the parent packages of a
    sapiens2 sub-module (``find_spec`` imports them)."""
    top = name.split('.')[0]
    if not IMPORTABLE.fullmatch(name):
        raise BundleError(f"{path}: custom_imports names {name!r}; a bundle's config imports only sapiens2 and its "
                          'project packages (sapiens2_<project>), nothing was imported: export the bundle again with '
                          'tools/deploy/export.py, or import the package that registers its modules yourself before '
                          'loading the bundle')
    # the package first, without importing it: its origin decides whether its sub-modules may be looked up
    if not (_installed(top, folder, package=True) and _installed(name, folder)):
        raise BundleError(f'{path}: custom_imports names {name!r}, which is not an installed module; install the '
                          'package that provides it (a bundle brings no code of its own)')


def _installed(name: str, folder: str, package: bool = False) -> bool:
    """Whether the module ``name`` is found outside the bundle ``folder`` (``package``: and is a package)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    origin = osp.realpath(spec.origin) if spec is not None and spec.origin else None
    return (origin is not None and not origin.startswith(osp.realpath(folder) + osp.sep)
            and (not package or spec.submodule_search_locations is not None))


def _types(value: Any) -> Iterator[str]:
    """Every ``type`` string of a config value, at any depth."""
    if isinstance(value, dict):
        if isinstance(value.get('type'), str):
            yield value['type']
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _types(item)


def _registered(load: bool) -> Set[str]:
    """The names (bare and ``scope.Name``) of the classes of every registry a ``registry`` module defines (mmengine's
    root registries, their children, mmpose's codecs...; ``load``: after importing the registries' locations)."""
    from mmengine.registry import Registry
    modules = [module for name, module in list(sys.modules.items()) if name.rpartition('.')[2] in ('registry', 'root')]
    names, stack = set(), [value for module in modules for value in vars(module).values()
                           if isinstance(value, Registry)]
    while stack:
        registry = stack.pop()
        if load:
            registry.import_from_location()
        names.update(registry.module_dict)
        names.update(f'{registry.scope}.{name}' for name in registry.module_dict)
        stack.extend(registry.children.values())
    return names


def _check_types(values: dict, path: str) -> None:
    types = set(_types(values))
    unknown = types - _registered(load=False)
    unknown = unknown and unknown - _registered(load=True)
    if unknown:
        raise BundleError(f'{path}: type {sorted(unknown)[0]!r} is not the name of a registered class (MMEngine would '
                          "import it as a Python path and call it, and a bundle's config is data, never run): export "
                          'the bundle again with tools/deploy/export.py, or install the package that registers it')
