"""A config text read as data, never run: the literal assignments MMEngine's ``Config.dump`` writes.

``Config.dump`` (``pretty_text``) writes a ``.py`` config as top-level ``name = value`` lines whose values are
constants, lists, tuples, sets, ``{...}`` dicts, ``dict(key=value, ...)`` and ``dict({...})`` calls and negative
numbers. Files and strings a user was handed in that form (a bundle's ``config.py``, the ``meta.config`` a checkpoint
carries, which MMEngine's resume would run) are parsed here with :mod:`ast` and never executed; anything else is a
:class:`ConfigNotDataError` naming the line and what was found (``a call to __import__('os').system``).
"""
import ast
from typing import Any


class ConfigNotDataError(ValueError):
    """A config text holding more than literal assignments (the message: ``<name>, line <n>: <what was found>``)."""


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


def literal_value(text: str) -> Any:
    """The value of one expression written as a config writes it (``[dict(type='CocoMetric', ann_file='x')]``), read
    without running it; :class:`ConfigNotDataError` says what else was found."""
    try:
        return _literal(ast.parse(text.strip(), mode='eval').body)
    except (SyntaxError, ValueError) as err:
        raise ConfigNotDataError(f'not a value ({getattr(err, "msg", err)})') from None
    except _NotData as err:
        raise ConfigNotDataError(err.what) from None


def config_values(text: str, name: str) -> dict:
    """The top-level values of the config ``text`` (``name``: its file, for messages), read without running it."""
    try:
        tree = ast.parse(text, name)
    except (SyntaxError, ValueError) as err:  # ValueError: a null byte
        line = f', line {err.lineno}' if getattr(err, 'lineno', None) else ''
        raise ConfigNotDataError(f'{name}{line}: not a config ({getattr(err, "msg", err)})') from None
    values = {}
    for statement in tree.body:
        try:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                raise _NotData(statement, _statement(statement))
            values[statement.targets[0].id] = _literal(statement.value)
        except _NotData as err:
            raise ConfigNotDataError(f'{name}, line {err.node.lineno}: {err.what}') from None
    return values
