"""PEP 562 lazy exports: a package lists its public names and the submodule of each, imported on first use.

The console scripts (``sapiens2_entry``) import parts of the package without torch, MMEngine, mmpose or mmseg, so the
``__init__`` of a package on their path must not import its heavy submodules; ``from package import Name`` still
works, and :func:`sapiens2.register_all_modules` imports them all.
"""
import importlib
import sys
from typing import Any, Callable, Dict, List, Tuple


def lazy_exports(package: str, exports: Dict[str, str]) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``; ``exports`` maps each public name to the submodule that
    defines it, relative to the package (``{'init_model': '.builder'}``)."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        value = getattr(importlib.import_module(exports[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> List[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
