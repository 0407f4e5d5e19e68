"""``--cfg-options`` that would change nothing, or fail inside MMEngine.

MMEngine's ``Config.merge_from_dict`` adds a top-level key that nothing reads (``max_iters=2`` instead of
``train_cfg.max_iters=2``) without a word, so the run goes on with the config's value; and a key below a value that
is not a dict (``model.backbone.init_cfg.checkpoint=x`` where ``init_cfg`` is None) fails with MMEngine's traceback.
:func:`check_cfg_options` refuses both before the merge, naming the option, where the key lives in the config (the
dotted paths ending in the same or a close name) and how to set it.
"""
import difflib
from collections.abc import Iterator, Mapping
from typing import Optional

from mmengine.config import Config

from .argument_checks import TEST_TIME_KEYS
from .known_names import runner_keys


class ConfigOptionError(ValueError):
    """A ``--cfg-options`` key that the config does not have, or that goes below a value that is not a dict."""


#: Top-level variables of configs that sapiens2 reads besides the Runner's keys (the pose inferencer's ``codec``).
READ_VARIABLES = ('codec', )


def check_cfg_options(cfg: Config, options: Mapping) -> None:
    """Raise :class:`ConfigOptionError` with one line per option of ``options`` that cannot do what it says."""
    tree = cfg.to_dict()
    read = {*runner_keys(), *TEST_TIME_KEYS, *READ_VARIABLES}
    problems = [problem for key in options for problem in (_unread_top_level(str(key), tree, read),
                                                            _below_a_value(str(key), tree, options)) if problem]
    if problems:
        source = getattr(cfg, 'filename', None) or '<config>'
        raise ConfigOptionError('\n'.join(f'--cfg-options {problem} ({source})' for problem in problems))


def _unread_top_level(key: str, tree: Mapping, read: set) -> Optional[str]:
    """A key under a top-level name nothing reads: not in the config, or one of its variables (``max_iters = 600``),
    whose value was used when the file was read and is not read again."""
    top = key.split('.', 1)[0]
    if top in read or top.startswith('_'):
        return None
    leaf = key.rsplit('.', 1)[-1]
    paths = [path for path in _dotted_paths(tree) if '.' in path]
    same = [path for path in paths if path.rsplit('.', 1)[-1] == leaf]
    close = same or [path for path in paths if difflib.get_close_matches(leaf, [path.rsplit('.', 1)[-1]], n=1,
                                                                          cutoff=0.8)]
    close += difflib.get_close_matches(top, sorted(read), n=1, cutoff=0.8)
    hint = f"; did you mean {' or '.join(sorted(set(close))[:3])}?" if close else \
        '; set the key where it is used (python tools/misc/print_config.py CONFIG shows the keys)'
    why = (f'{top!r} is a variable of the config, used when the file was read: setting it now changes nothing'
           if top in tree else f'the config has no top-level key {top!r} and nothing reads it')
    return f'{key}: {why}{hint}'


def _below_a_value(key: str, tree: Mapping, options: Mapping) -> Optional[str]:
    node, parts = tree, key.split('.')
    for depth, part in enumerate(parts[:-1]):
        if isinstance(node, Mapping):
            if part not in node:
                return None  # a new sub-key: MMEngine adds it
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
        if not isinstance(node, (Mapping, list, tuple)):
            where = '.'.join(parts[:depth + 1])
            if f'{where}._delete_' in options:
                return None  # replaced as a whole
            return (f'{key}: {where} is {node!r} in the config, not a dict, so it has no key {parts[depth + 1]!r}; '
                    f'replace it as a whole: --cfg-options {where}._delete_=True {key}=... (and its other keys, '
                    f'e.g. {where}.type=...)')
    return None


def _dotted_paths(node, path: str = '') -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            child = f'{path}.{key}' if path else str(key)
            yield child
            yield from _dotted_paths(value, child)
