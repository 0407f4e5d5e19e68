"""The package's layers, read from its imports (``ast``, every import including those inside functions): no import
circle between modules, counting the imports under ``TYPE_CHECKING`` (a type named across two files is a circle of
concepts too), and no import from a lower layer to a higher one except the lines marked ``# layer:`` with their reason
(those under ``TYPE_CHECKING`` aside; docs/modules.md draws the layers)."""
import ast
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set, Tuple

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / 'sapiens2'
#: Sub-packages (and top-level modules) by layer, lowest first; a module may import its own layer and those below.
#: The single writer (``utils/atomic_save.py``) and the checkpoint-file check are leaves (the standard library and
#: MMEngine only) that every layer writes and checks files through.
LAYERS = (
    ('version', 'registry', 'utils', 'metainfo', 'engine.checkpoint.integrity'),
    ('config', 'structures', 'codecs', 'evaluation', 'visualization'),
    ('engine', 'models', 'datasets', 'adaptations', 'registration'),
    ('hub', ),
    ('apis', ),
    ('deploy', 'interop'),
    ('cli', '__init__'),
)
#: Imports that are wrong whatever the layers say (the guide's rules).
FORBIDDEN = (('models', 'datasets'), ('engine', 'models'), ('engine', 'apis'), ('engine', 'deploy'), ('engine', 'hub'),
             ('engine', 'interop'), ('models', 'apis'), ('models', 'deploy'), ('models', 'hub'), ('models', 'interop'),
             ('datasets', 'apis'), ('datasets', 'deploy'), ('datasets', 'hub'), ('datasets', 'interop'))
MAX_UPWARD = 1


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def is_reexport(tree: ast.Module) -> bool:
    """A module kept at an old import path: a docstring and imports only."""
    body = [node for node in tree.body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    return bool(body) and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in body)


def imports(path: Path, modules: Set[str], type_only_too: bool = False) -> List[Tuple[str, int, str]]:
    """(imported module of this package, line number, line text) of ``path``; those under ``TYPE_CHECKING`` only
    with ``type_only_too``."""
    tree = ast.parse(path.read_text())
    type_only = set() if type_only_too else {
        id(node) for block in ast.walk(tree) if isinstance(block, ast.If) and 'TYPE_CHECKING' in ast.unparse(block.test)
        for statement in block.body for node in ast.walk(statement)}
    name, lines, found = module_name(path), path.read_text().splitlines(), []
    base = name if path.name == '__init__.py' else name.rpartition('.')[0]
    for node in ast.walk(tree):
        if id(node) in type_only or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            prefix = '.'.join(base.split('.')[:len(base.split('.')) - node.level + 1]) if node.level else ''
            module = '.'.join(filter(None, (prefix, node.module)))
            targets = [module] + [f'{module}.{alias.name}' for alias in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition('.')[0]
            if target and target != name and (target, node.lineno) not in {(t, n) for t, n, _ in found}:
                found.append((target, node.lineno, lines[node.lineno - 1]))
    return found


def import_graph(type_only_too: bool = False) -> Tuple[Dict[str, Set[str]], Dict[str, List[Tuple[str, int, str]]],
                                                       Set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob('*.py')}
    edges, details, reexports = defaultdict(set), {}, set()
    for name, path in paths.items():
        details[name] = imports(path, set(paths), type_only_too)
        edges[name] = {target for target, _, _ in details[name]}
        if is_reexport(ast.parse(path.read_text())):
            reexports.add(name)
    return edges, details, reexports


def circles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> Tuple[int, str]:
    """(layer index, the layer entry) of a module of the package: the longest entry it falls under."""
    relative = module.partition('.')[2] or '__init__'
    best = max(((len(entry), index, entry) for index, layer in enumerate(LAYERS) for entry in layer
                if relative == entry or relative.startswith(entry + '.')), default=None)
    assert best is not None, f'{module} is in no layer of tests/test_layers.py: add its package to LAYERS'
    return best[1], best[2]


def test_no_import_circle():
    edges, _, _ = import_graph(type_only_too=True)
    assert circles(edges) == []


def test_lower_layers_do_not_import_higher_ones():
    _, details, reexports = import_graph()
    upward, unmarked, forbidden = [], [], []
    for module, found in sorted(details.items()):
        level, entry = layer_of(module)
        for target, line, text in found:
            target_level, target_entry = layer_of(target)
            if (entry.split('.')[0], target_entry.split('.')[0]) in FORBIDDEN:
                forbidden.append(f'{module}:{line} imports {target}')
            if target_level > level and module not in reexports:
                upward.append((f'{module}:{line}', target))
                if '# layer:' not in text:
                    unmarked.append(f'{module}:{line} imports {target}')
    assert forbidden == []
    assert unmarked == [], 'an import to a higher layer needs a "# layer: <reason>" comment on its line'
    assert len({place for place, _ in upward}) <= MAX_UPWARD, upward  # import statements


def test_the_checks_find_a_circle_and_an_upward_import(tmp_path):
    assert circles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
    assert layer_of('sapiens2.utils.atomic_save') == (0, 'utils')
    assert layer_of('sapiens2.engine.checkpoint.integrity') == (0, 'engine.checkpoint.integrity')
    assert layer_of('sapiens2.engine.checkpoint.formats') == (2, 'engine')
    module = tmp_path / 'm.py'
    module.write_text('"""A stub."""\nfrom .x import y  # noqa\n')
    assert is_reexport(ast.parse(module.read_text()))
    module.write_text('from .x import y\nz = 1\n')
    assert not is_reexport(ast.parse(module.read_text()))
