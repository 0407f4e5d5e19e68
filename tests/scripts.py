"""Repository scripts (tools/, benchmarks/) loaded as modules, for the tests of their functions."""
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Optional

REPO = Path(__file__).resolve().parents[1]


def load_script(relpath: str, name: Optional[str] = None) -> ModuleType:
    """Execute the script at ``relpath`` (from the repository root) as a module named ``name`` (default its stem)."""
    path = REPO / relpath
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
