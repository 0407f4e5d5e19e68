"""Every config resolves to what it resolved to when ``tests/data/config_snapshot.json`` was written, so an edit of a
shared base (``configs/_base_/...``) that changes a config it reaches fails here, naming the config and the key.

The snapshot holds every top-level key of every config under ``configs/`` and ``projects/*/configs/`` (bases under
``_base_/`` excluded), resolved by ``Config.fromfile`` after ``import sapiens2``; each distinct value is stored once
(``values``, by a hash) and each config maps its keys to those hashes (``configs``); absolute paths start at
``<repo>`` or ``<site-packages>``. A key in the snapshot must resolve
to an equal value (tuples stay tuples), except a variable that named a backbone's checkpoint for the config's own text
(``CHECKPOINT_NAME_VARIABLES``: the backbone bases name it now), which may be gone; a config may gain a key (a variable
of a new base) unless the Runner reads it. A ``_scope_`` that is empty or names the config's own ``default_scope`` is
left out of both sides: MMEngine stamps it on the dicts of a ``sapiens2::`` base, and building under the scope a
build already runs in changes nothing.

After an intended change: ``python -m tests.configs.test_config_snapshot --write`` (and review the diff).
"""
import functools
import hashlib
import inspect
import json
import os
import sys
from pathlib import Path

import pytest

from tests import DATA_DIR

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = DATA_DIR / 'config_snapshot.json'
TUPLE = '__tuple__'
REWRITE = 'python -m tests.configs.test_config_snapshot --write'
#: Variables that only a config's own text reads (the checkpoint its backbone's init_cfg names).
CHECKPOINT_NAME_VARIABLES = {'pretrained_checkpoint', 'pretrained'}


def config_files() -> list:
    """Every config (not a base) as a path relative to the repository, sorted."""
    files = [*REPO.glob('configs/**/*.py'), *REPO.glob('projects/*/configs/**/*.py')]
    return sorted(str(f.relative_to(REPO)) for f in files if '_base_' not in f.parts and f.name != '__init__.py')


def _portable(path: str) -> str:
    """An absolute path (a metainfo file a custom layout names) as the same on every machine."""
    if 'site-packages' + os.sep in path:  # first: a checkout's own .venv lies inside the repository
        return '<site-packages>' + path.split('site-packages', 1)[1]
    return '<repo>' + path[len(str(REPO)):] if path.startswith(str(REPO) + os.sep) else path


def _plain(value, scope):
    if isinstance(value, str) and os.path.isabs(value):
        return _portable(value)
    if isinstance(value, dict):
        return {str(k): _plain(v, scope) for k, v in value.items() if not (k == '_scope_' and v in (None, scope))}
    if isinstance(value, tuple):
        return {TUPLE: [_plain(v, scope) for v in value]}
    if isinstance(value, list):
        return [_plain(v, scope) for v in value]
    return value


def resolve(path: str) -> dict:
    """The config's top-level keys as JSON values (a tuple as ``{"__tuple__": [...]}``)."""
    from mmengine.config import Config

    import sapiens2  # noqa: F401  (the sapiens2:: bases and the custom layouts of Config.fromfile)
    cfg = Config.fromfile(str(REPO / path)).to_dict()
    return _plain(cfg, cfg.get('default_scope'))


def runner_keys() -> set:
    from mmengine.runner import FlexibleRunner, Runner
    return {name for runner in (Runner, FlexibleRunner) for name in inspect.signature(runner.__init__).parameters}


def _value_id(value) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


def write_snapshot() -> None:
    values, configs = {}, {}
    for path in config_files():
        resolved = resolve(path)
        values.update({_value_id(v): v for v in resolved.values()})
        configs[path] = {key: _value_id(v) for key, v in sorted(resolved.items())}
    lines = [f'  {json.dumps(i)}: {json.dumps(v, sort_keys=True)}' for i, v in sorted(values.items())]
    entries = [f'  {json.dumps(path)}: {json.dumps(keys)}' for path, keys in configs.items()]
    SNAPSHOT.write_text('{"configs": {\n' + ',\n'.join(entries) + '\n},\n"values": {\n' + ',\n'.join(lines) + '\n}}\n')


@functools.lru_cache(maxsize=1)
def _snapshot() -> dict:
    """Each config's keys with their expected values."""
    stored = json.loads(SNAPSHOT.read_text())
    return {path: {key: stored['values'][i] for key, i in keys.items()} for path, keys in stored['configs'].items()}


def test_snapshot_covers_every_config():
    assert sorted(_snapshot()) == config_files(), f'configs added or removed: {REWRITE}'


@pytest.mark.parametrize('path', config_files())
def test_config_resolves_as_in_the_snapshot(path):
    expected = _snapshot().get(path)
    assert expected is not None, f'{path} is not in {SNAPSHOT.name}: {REWRITE}'
    resolved = resolve(path)
    changed = sorted(key for key in expected if resolved.get(key, KeyError) != expected[key]
                     and not (key in CHECKPOINT_NAME_VARIABLES and key not in resolved))
    assert not changed, f'{path}: {changed} resolve differently from {SNAPSHOT.name}'
    gained = sorted((resolved.keys() - expected.keys()) & (runner_keys() | {'runner_type', 'custom_imports'}))
    assert not gained, f'{path} gained keys that the Runner reads: {gained}'


if __name__ == '__main__':
    if sys.argv[1:] != ['--write']:
        sys.exit(__doc__)
    write_snapshot()
    print(f'wrote {SNAPSHOT.relative_to(REPO)}')
