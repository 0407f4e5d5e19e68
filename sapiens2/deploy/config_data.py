"""A bundle's config read as data, never run.

A bundle is a folder users download and share. MMEngine's ``Config.fromfile`` executes a ``.py`` config, so a
bundle whose ``config.py`` began ``_x = __import__('os').system(...)`` ran that command on load. Export writes the
config with ``Config.dump``: top-level ``name = value`` lines whose values are constants, lists, tuples, sets,
``{...}`` dicts, ``dict(key=value, ...)`` and ``dict({...})`` calls and negative numbers. :func:`read_config_data`
parses the file with :mod:`ast` and accepts exactly that; anything else is one
:class:`~sapiens2.deploy.bundle.BundleError` line naming the file, the line and what was found.
:func:`load_bundle_config` builds the ``mmengine.Config`` from it, after checking that every ``type`` names a
registered class: MMEngine's registries import and call any other dotted name (``type='subprocess.getoutput',
cmd=...``), which would run code from data.
"""
import ast
import importlib.util
import os.path as osp
import sys
from typing import TYPE_CHECKING, Any, Iterator, Set

from .bundle import BundleError

if TYPE_CHECKING:
    from mmengine.config import Config

#: Keys a config's own layout is given by (:mod:`sapiens2.utils.custom_layout`); export applied them already.
LAYOUT_KEYS = ('custom_metainfo', 'custom_data_root')


class _NotData(Exception):

    def __init__(self, node: ast.AST, what: str) -> None:
        super().__init__(what)
        self.node, self.what = node, what


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + '...'


def _literal(node: ast.AST) -> Any:
    """The value of an expression ``Config.dump`` writes; :class:`_NotData` for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(item) for item in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else set(items) if isinstance(node, ast.Set) else items
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise _NotData(node, 'a ** unpacking')
        return {_literal(key): _literal(value) for key, value in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    if isinstance(node, ast.Call):  # dict(key=value, ...), or dict({...}) for keys that are not identifiers
        positional = node.args == [] or len(node.args) == 1 and isinstance(node.args[0], ast.Dict) and \
            not node.keywords
        if not (isinstance(node.func, ast.Name) and node.func.id == 'dict') or not positional or \
                any(keyword.arg is None for keyword in node.keywords):
            raise _NotData(node, f'a call to {_short(node.func)}')
        return _literal(node.args[0]) if node.args else {k.arg: _literal(k.value) for k in node.keywords}
    if isinstance(node, ast.Name):
        raise _NotData(node, f'the name {node.id} (a variable, not a value)')
    raise _NotData(node, f'an expression ({_short(node)})')


def _statement(node: ast.stmt) -> str:
    """What a statement other than ``name = value`` is, for the error line."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return f'an import ({_short(node)})'
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return f'a definition of {node.name}'
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return f'an assignment other than `name = value` ({_short(node)})'
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    if calls:
        return f'a call to {_short(calls[-1].func)}'  # the innermost call comes last
    return f'a {type(node).__name__} statement ({_short(node)})'


def read_config_data(path: str) -> dict:
    """The top-level values of the config file ``path``, read without running it; :class:`BundleError` (one line)
    for a file that is not what ``Config.dump`` writes."""
    how = ("a bundle's config is read as data and never run (only `name = value` lines of literals and dict(...), "
           'as export writes them): export the bundle again with tools/deploy/export.py')
    try:
        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
    except (SyntaxError, ValueError) as err:  # ValueError: a null byte, or a file that is not UTF-8
        line = f', line {err.lineno}' if getattr(err, 'lineno', None) else ''
        raise BundleError(f'{path}{line}: not a config ({getattr(err, "msg", err)}); {how}') from None
    values = {}
    for statement in tree.body:
        try:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                raise _NotData(statement, _statement(statement))
            values[statement.targets[0].id] = _literal(statement.value)
        except _NotData as err:
            raise BundleError(f'{path}, line {err.node.lineno}: {err.what}; {how}') from None
    return values


def load_bundle_config(path: str, folder: str) -> 'Config':
    """The ``mmengine.Config`` of a bundle's config file (:func:`read_config_data`). Its ``custom_imports`` are
    imported as ``Config.fromfile`` imports them, when they are installed modules (not files of the bundle); its
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
        _import_installed(name, path, folder)
    _check_types(values, path)
    return Config(values, filename=path)


def _import_installed(name: str, path: str, folder: str) -> None:
    """Import the module ``name`` of ``custom_imports`` unless it is not installed or a file of the bundle."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    origin = osp.realpath(spec.origin) if spec is not None and spec.origin else None
    if origin is None or origin.startswith(osp.realpath(folder) + osp.sep):
        raise BundleError(f'{path}: custom_imports names {name!r}, which is not an installed module; install the '
                          'package that provides it (a bundle brings no code of its own)')
    importlib.import_module(name)


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
