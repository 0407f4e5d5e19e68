"""Config keys that the module they configure does not take: ``model.backbone.patch_sise``,
``model.decode_head.num_clases``, ``train_cfg.max_iter``, and misspelt ``default_hooks`` names.

MMEngine passes every key of a ``dict(type=...)`` to the registered class, which fails with ``TypeError: __init__()
got an unexpected keyword argument`` deep inside runner construction (or much later: the train loop is built when
training starts). :func:`check_config_arguments` compares each key with the arguments of the class's ``__init__``
(following ``**kwargs`` through the base classes a class forwards them to; a class that keeps ``**kwargs`` for
itself takes any key and is not checked) and raises :class:`ConfigArgumentError`, one line per key, naming the
key path and the closest argument. A ``default_hooks`` key that is not a hook name MMEngine knows adds another hook
(``chekpoint=dict(type='CheckpointHook')`` runs a second CheckpointHook beside ``checkpoint``): one close to a
known name, one without a ``type``, or one repeating another entry's hook type is reported the same way.
"""
import difflib
import functools
import inspect
import re
from collections.abc import Iterator, Mapping
from typing import Callable, Optional

from mmengine.config import Config

from .known_names import DATA_KEYS, registered_objects, runner_keys, strip_scope

#: The hooks MMEngine's Runner always registers (``Runner.register_default_hooks``), and the names OpenMMLab and
#: sapiens2 configs add to ``default_hooks``.
DEFAULT_HOOK_NAMES = ('runtime_info', 'timer', 'sampler_seed', 'logger', 'param_scheduler', 'checkpoint',
                      'visualization', 'non_finite')
#: Top-level keys built besides the Runner's: ``tools/test.py --tta``'s.
TEST_TIME_KEYS = ('tta_model', 'tta_pipeline')
# Keys a builder takes out of a module's dict before the class sees them, by the key path of the dict.
_CONSUMED = ((r'optim_wrapper(\.[^.\[]+)?', ('constructor', 'paramwise_cfg')),
             (r'param_scheduler(\[\d+\])?', ('convert_to_iter_based', )),
             (r'(default_hooks\.[^.]+|custom_hooks\[\d+\])', ('priority', )))
# Dicts that are arguments of their own kind, not modules to check (weight initialisers are checked when built).
_SKIPPED_KEYS = ('init_cfg', ) + DATA_KEYS
_LISTED_ARGUMENTS = 12


class ConfigArgumentError(ValueError):
    """A config key that the module it configures does not take (``patch_sise``, ``num_clases``)."""


def check_config_arguments(cfg: Config | Mapping) -> None:
    """Raise :class:`ConfigArgumentError` with one line per config key that its module does not take, naming the
    key path and the closest valid argument, and per misspelt or duplicating ``default_hooks`` key."""
    tree = cfg.to_dict() if isinstance(cfg, Config) else dict(cfg)
    scope = tree.get('default_scope')
    read = {**runner_keys(), **dict.fromkeys(TEST_TIME_KEYS)}  # a config's own variables are not built as such
    problems = [problem for key in tree if key in read for path, node in _iter_modules(tree[key], key)
                for problem in _unknown_keys(path, node, scope)]
    problems += _loop_problems(tree) + _hook_name_problems(tree.get('default_hooks'))
    if problems:
        source = getattr(cfg, 'filename', None) or '<config>'
        raise ConfigArgumentError('\n'.join(f'{source}: {problem}' for problem in problems))


# ----------------------------------------------------------------------------------------------------- modules
def _iter_modules(node, path: str = '') -> Iterator[tuple[str, Mapping]]:
    """(key path, dict) of every ``dict(type=...)`` in the config."""
    if isinstance(node, Mapping):
        if 'type' in node and path not in ('train_cfg', 'val_cfg', 'test_cfg'):  # loops: _loop_problems
            yield path, node
        for key, value in node.items():
            if key not in _SKIPPED_KEYS:
                yield from _iter_modules(value, f'{path}.{key}' if path else str(key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _iter_modules(value, f'{path}[{i}]')


def _unknown_keys(path: str, node: Mapping, scope: Optional[str]) -> list[str]:
    candidates = registered_objects(node['type'], scope)
    accepted = [accepted_arguments(obj) for obj in candidates]
    if not candidates or any(names is None for names in accepted):
        return []  # an unknown type (check_config_types reports it), or a class taking any keyword
    consumed = next((keys for pattern, keys in _CONSUMED if re.fullmatch(pattern, path)), ())
    names = set().union(*accepted)
    label = _name(candidates[0])
    return [_describe(f'{path}.{key}' if path else key, key, label, names) for key in node
            if key != 'type' and not str(key).startswith('_') and key not in consumed and key not in names]


@functools.lru_cache(maxsize=None)
def accepted_arguments(obj: Callable) -> Optional[frozenset]:
    """The keyword arguments ``obj`` (a class or a function) takes, or None when it takes any keyword.

    A class's ``**kwargs`` are followed into the next base class's ``__init__`` when its source forwards them
    (``super().__init__(..., **kwargs)``); ``object`` and ``torch.nn.Module`` take no keyword.
    """
    import torch
    closed = (object, torch.nn.Module)
    functions = [(c, vars(c)['__init__']) for c in obj.__mro__ if '__init__' in vars(c)] if isinstance(obj, type) \
        else [(None, obj)]
    names: set[str] = set()
    for owner, function in functions:
        if owner in closed:
            return frozenset(names)
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            return None
        names.update(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        varkw = next((p.name for p in parameters if p.kind == p.VAR_KEYWORD), None)
        if varkw is None:
            return frozenset(names - {'self'})
        if owner is None or not _forwards(function, varkw):
            return None
    return None


def _forwards(function: Callable, varkw: str) -> bool:
    """Whether ``function``'s source passes ``**varkw`` on to an ``__init__`` (its base class's)."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    call = r'\.__init__\((?:[^()]|\([^()]*\))*\*\*' + re.escape(varkw) + r'\b'  # not the `def __init__(` line
    return re.search(call, source) is not None


def _name(obj: Callable) -> str:
    return getattr(obj, '__name__', repr(obj))


def _describe(path: str, key: str, owner: str, names: set) -> str:
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    if close:
        return f"{path}: {owner} has no argument {key!r}; did you mean {close[0]!r}?"
    listed = sorted(n for n in names if not n.startswith('_'))
    more = ', ...' if len(listed) > _LISTED_ARGUMENTS else ''
    return f"{path}: {owner} has no argument {key!r} (it takes {', '.join(listed[:_LISTED_ARGUMENTS])}{more})"


# ------------------------------------------------------------------------------------------------------- loops
def _loop_problems(tree: Mapping) -> list[str]:
    """Unknown keys of ``train_cfg`` / ``val_cfg`` / ``test_cfg``, checked against the loop the Runner builds
    (``type``, or for a train loop without one ``by_epoch``: EpochBasedTrainLoop or IterBasedTrainLoop)."""
    from mmengine.runner import EpochBasedTrainLoop, IterBasedTrainLoop, TestLoop, ValLoop
    problems = []
    for key, default in (('train_cfg', None), ('val_cfg', ValLoop), ('test_cfg', TestLoop)):
        loop = tree.get(key)
        if not isinstance(loop, Mapping) or not loop:
            continue
        if 'type' in loop:
            problems += _unknown_keys(key, loop, tree.get('default_scope'))
            continue
        cls = default or (EpochBasedTrainLoop if loop.get('by_epoch') else IterBasedTrainLoop)
        names = set(accepted_arguments(cls) or ()) | {'by_epoch'}
        problems += [_describe(f'{key}.{k}', k, cls.__name__, names) for k in loop if k not in names]
    return problems


# ------------------------------------------------------------------------------------------------------- hooks
def _hook_name_problems(hooks) -> list[str]:
    """``default_hooks`` keys that add a hook by mistake: close to a known name, without a type, or repeating the
    hook type of another entry."""
    if not isinstance(hooks, Mapping):
        return []
    problems = []
    types = {name: strip_scope(h['type']) for name, h in hooks.items() if isinstance(h, Mapping)
             and isinstance(h.get('type'), str)}
    for name, hook in hooks.items():
        if name in DEFAULT_HOOK_NAMES:
            continue
        others = [n for n in {*DEFAULT_HOOK_NAMES, *hooks} if n != name]
        close = difflib.get_close_matches(name, others, n=1, cutoff=0.75)
        twin = next((n for n in hooks if n != name and name in types and types.get(n) == types[name]), None)
        untyped = isinstance(hook, Mapping) and 'type' not in hook
        if close or twin or untyped:
            guess = close[0] if close else None
            why = (f'it adds a second {types[name]} beside default_hooks.{twin}' if twin else
                   'it has no type' if untyped else f'it does not configure default_hooks.{guess}')
            fix = (f'; did you mean {guess!r}?' if guess else '; to run both, put it in custom_hooks' if twin else
                   '; give it a type, or move it to custom_hooks')
            problems.append(f'default_hooks.{name}: not a default hook name ({why}){fix}')
    return problems
