"""The config package and the packaged metainfo sit low: they import no datasets, models, engine or tools, and the
config modules import each other one way (imports read with ``ast``, so lazy imports count too)."""
import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# package -> the sapiens2 packages its modules may import.
ALLOWED = {'config': {'config', 'metainfo'}, 'metainfo': {'metainfo'}}


def sapiens2_imports(path: Path) -> set[str]:
    """The ``sapiens2...`` modules a file imports (relative imports resolved)."""
    package = list(path.relative_to(REPO).with_suffix('').parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = '.'.join(base + ([node.module] if node.module else []))
            names = [f'{name}.{alias.name}' for alias in node.names] if node.level and not node.module else [name]
            found.update(n for n in names if n.startswith('sapiens2'))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith('sapiens2'))
    return found


@pytest.mark.parametrize('package', sorted(ALLOWED))
def test_imports_stay_below(package):
    wrong = [f'{path.relative_to(REPO)} imports {name}' for path in sorted((REPO / 'sapiens2' / package).glob('*.py'))
             for name in sorted(sapiens2_imports(path)) if name.split('.')[1] not in ALLOWED[package]]
    assert not wrong, '\n'.join(wrong)


def test_config_modules_import_each_other_one_way():
    modules = {f'sapiens2.config.{p.stem}': p for p in (REPO / 'sapiens2' / 'config').glob('*.py')}
    graph = {name: {m for m in sapiens2_imports(path) if m in modules} for name, path in modules.items()}

    def reaches(start: str, goal: str, seen: set) -> bool:
        return any(m == goal or (m not in seen and not seen.add(m) and reaches(m, goal, seen)) for m in graph[start])

    circles = [name for name in graph if reaches(name, name, set())]
    assert not circles, f'import circles through {circles}'
