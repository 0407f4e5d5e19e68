"""The ``_base_`` chain of a config file, read without running it: MMEngine follows ``_base_`` files recursively and
ends configs that name each other (a.py's ``_base_`` is b.py, b.py's is a.py) in ``RecursionError``; this finds the
loop to name it in one line."""
import ast
import os.path as osp
from typing import List, Optional


class BaseLoopError(ValueError):
    """Configs whose ``_base_`` files lead back to themselves."""


def base_files(path: str) -> List[str]:
    """The local ``_base_`` files ``path`` names (absolute; package bases ``pkg::...`` and non-literal values are
    left out), as MMEngine resolves them: relative to the config's folder."""
    try:
        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == '_base_' for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            found += [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    folder = osp.dirname(osp.abspath(path))
    return [osp.normpath(osp.join(folder, base)) for base in found if '::' not in base]


def base_loop(path: str) -> Optional[List[str]]:
    """The configs of a ``_base_`` loop reachable from ``path``, from the first file of the loop back to it; None
    when there is none."""
    stack: List[str] = []
    done = set()

    def visit(config: str) -> Optional[List[str]]:
        config = osp.realpath(config)
        if config in stack:
            return stack[stack.index(config):] + [config]
        if config in done:
            return None
        stack.append(config)
        for base in base_files(config):
            loop = visit(base)
            if loop:
                return loop
        stack.pop()
        done.add(config)
        return None

    return visit(path)


def refuse_base_loop(path: str) -> None:
    """Raise :class:`BaseLoopError` naming the loop when ``path``'s ``_base_`` files lead back to a config of the
    chain."""
    loop = base_loop(path)
    if loop:
        chain = ' -> '.join(loop)
        raise BaseLoopError(f'config {path}: its _base_ files form a loop ({chain}); a config cannot inherit from '
                            'itself: remove the _base_ entry that leads back.')
