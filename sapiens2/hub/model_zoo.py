"""The model zoo: short aliases (``pose-1b``, ``pretrain-1b-4k``...) for the released Hub repositories.

The table is data, read from JSON files, so a project adds its models without code:

* ``sapiens2/hub/model_zoo.json`` (the released repositories);
* every ``model_zoo.json`` among the packaged configs (``sapiens2/.mim/configs/<folder>/``, i.e. ``configs/*`` and
  ``projects/<name>/configs``): a project ships its rows beside its configs;
* the files listed in ``$SAPIENS2_MODEL_ZOO`` (separated by ``os.pathsep``): your own table, whose rows replace
  the packaged fields of the same alias.

A file is ``{"models": [row, ...]}``. A row has ``alias``, ``repo`` (Hub repository id), ``files`` (candidate checkpoint
file names, tried in order) or ``packaged`` (a checkpoint file shipped inside the sapiens2 package, relative to its
folder, e.g. ``demo_models/<name>.safetensors``: no download, no repository), and optionally ``config`` (the model
config: ``sapiens2::<folder>/<file>.py`` or a path; rows without one are checkpoints only, e.g. pretrained backbones),
``revision`` (a pinned branch, tag or commit), ``local`` (file name patterns looked up under
``$SAPIENS2_CHECKPOINT_ROOT``), ``task``, ``size`` and ``sizes``: a row with ``sizes`` stands for one row per size, with
``{size}`` replaced in its strings. Packaged rows with the same alias are merged field by field (a project can add the
``config`` of a released repository); two files giving one field different values is an error.

For inference, :func:`resolve_model` maps an alias to its config and its checkpoint name; the checkpoint loader
resolves the name when the model is built (:mod:`sapiens2.hub.resolve`).
"""
import fnmatch
import json
import os
import os.path as osp
import re
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional, Tuple

ENV_TABLES = 'SAPIENS2_MODEL_ZOO'
TABLE_FILE = 'model_zoo.json'
CHECKPOINT_SUFFIXES = ('.safetensors', '.pth', '.bin')
_LIST_FIELDS = ('files', 'local')
_KNOWN_FIELDS = ('alias', 'repo', 'files', 'packaged', 'config', 'revision', 'local', 'task', 'size', 'sizes')
PACKAGE_DIR = osp.dirname(osp.dirname(osp.abspath(__file__)))


@dataclass(frozen=True)
class ModelZooEntry:
    """One alias of the model zoo (see the module docstring for the fields)."""

    alias: str
    repo: str
    files: Tuple[str, ...]
    config: Optional[str] = None
    revision: Optional[str] = None
    local: Tuple[str, ...] = ()
    task: Optional[str] = None
    size: Optional[str] = None
    packaged: Optional[str] = None
    sources: Tuple[str, ...] = field(default=(), compare=False)

    def uri(self) -> str:
        """The ``hf://`` reference of the repository (with the pinned revision, if any), or the packaged file."""
        if self.packaged:
            return self.packaged_path()
        return f'hf://{self.repo}' + (f'@{self.revision}' if self.revision else '')

    def packaged_path(self) -> Optional[str]:
        """The absolute path of the checkpoint shipped in the package, or None for a Hub model."""
        return osp.join(PACKAGE_DIR, self.packaged) if self.packaged else None

    def local_patterns(self) -> Tuple[str, ...]:
        """File name patterns of this model under the checkpoint root: ``local``, else ``<stem of each file>*``."""
        if self.local:
            return self.local
        stems = [osp.splitext(name)[0] for name in self.files if not name.startswith(('model.', 'pytorch_model.'))]
        return tuple(f'{stem}*' for stem in stems)


def _packaged_tables() -> List[str]:
    from sapiens2.config.packaged import config_dir
    tables = [osp.join(osp.dirname(osp.abspath(__file__)), TABLE_FILE)]
    for folder, dirs, files in sorted(os.walk(config_dir(), followlinks=True)):
        dirs.sort()
        if TABLE_FILE in files:
            tables.append(osp.join(folder, TABLE_FILE))
    return tables


def _user_tables() -> List[str]:
    return [p for p in os.environ.get(ENV_TABLES, '').split(os.pathsep) if p]


def _expand(row: dict, source: str) -> List[dict]:
    unknown = sorted(set(row) - set(_KNOWN_FIELDS))
    if unknown or 'alias' not in row:
        raise ValueError(f'{source}: model zoo row {row} has unknown fields {unknown} or no alias; the fields are '
                         f'{_KNOWN_FIELDS} (see sapiens2.hub.model_zoo)')
    sizes = row.get('sizes')
    if sizes is None:
        return [dict(row)]

    def fill(value, size):
        if isinstance(value, str):
            return value.replace('{size}', size)
        if isinstance(value, list):
            return [fill(v, size) for v in value]
        return value

    return [dict({k: fill(v, size) for k, v in row.items() if k != 'sizes'}, size=size) for size in sizes]


def _read_rows(path: str) -> List[dict]:
    try:
        with open(path) as f:
            table = json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f'cannot read the model zoo table {path} ({err}); it must be a JSON file '
                         '{"models": [...]}') from err
    if not isinstance(table, dict) or not isinstance(table.get('models'), list):
        raise ValueError(f'model zoo table {path} must be a JSON object {{"models": [row, ...]}}')
    return [expanded for row in table['models'] for expanded in _expand(row, path)]


def _merge(merged: Dict[str, dict], origins: Dict[str, Dict[str, str]], row: dict, source: str,
           override: bool) -> None:
    alias = row['alias']
    target = merged.setdefault(alias, {})
    for key, value in row.items():
        if value is None:
            continue
        if not override and key in target and target[key] != value:
            raise ValueError(f'model zoo alias {alias!r}: {key} is {target[key]!r} in {origins[alias][key]} but '
                             f'{value!r} in {source}; keep one (or override it in ${ENV_TABLES})')
        target[key] = value
        origins.setdefault(alias, {})[key] = source


def _entry(row: dict, sources: Tuple[str, ...]) -> ModelZooEntry:
    if row.get('packaged'):
        if row.get('repo'):
            raise ValueError(f'model zoo alias {row["alias"]!r} has both a packaged file and a repository (defined in '
                             f'{", ".join(sources)}); keep one')
        row = dict(row, repo='', files=row.get('files') or [osp.basename(row['packaged'])])
    missing = [key for key in ('repo', 'files') if not row.get(key) and not (key == 'repo' and row.get('packaged'))]
    if missing:
        raise ValueError(f'model zoo alias {row["alias"]!r} has no {" or ".join(missing)} (defined in '
                         f'{", ".join(sources)})')
    values = {f.name: row.get(f.name) for f in fields(ModelZooEntry) if f.name in row}
    for key in _LIST_FIELDS:
        if key in values:
            values[key] = tuple(values[key])
    return ModelZooEntry(**values, sources=sources)


def model_zoo() -> Dict[str, ModelZooEntry]:
    """Every alias of the packaged tables and of ``$SAPIENS2_MODEL_ZOO``, by alias."""
    merged: Dict[str, dict] = {}
    origins: Dict[str, Dict[str, str]] = {}
    for path in _packaged_tables():
        for row in _read_rows(path):
            _merge(merged, origins, row, path, override=False)
    for path in _user_tables():
        for row in _read_rows(path):
            _merge(merged, origins, row, path, override=True)
    return {alias: _entry(row, tuple(sorted(set(origins[alias].values())))) for alias, row in merged.items()}


def get_entry(alias: str) -> Optional[ModelZooEntry]:
    """The entry of ``alias``, or None when it is not one."""
    return model_zoo().get(str(alias))


def entries_of_repo(repo_id: str) -> List[ModelZooEntry]:
    """The entries whose Hub repository is ``repo_id``."""
    return [entry for entry in model_zoo().values() if entry.repo == repo_id]


def checkpoint_root() -> str:
    """``$SAPIENS2_CHECKPOINT_ROOT``, or ``~/.cache/sapiens2/checkpoints``: files put there by hand win over the Hub."""
    return osp.expanduser(os.environ.get('SAPIENS2_CHECKPOINT_ROOT', '~/.cache/sapiens2/checkpoints'))


def find_local_checkpoint(entry: ModelZooEntry, root: Optional[str] = None) -> Optional[str]:
    """A file of ``entry`` under the checkpoint root (any sub-folder; ``.safetensors`` before ``.pth``/``.bin``),
    or None."""
    root = root or checkpoint_root()
    if not osp.isdir(root):
        return None
    found = []
    for folder, _, files in os.walk(root):
        for name in files:
            stem, suffix = osp.splitext(name)
            if suffix in CHECKPOINT_SUFFIXES and any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(stem, p)
                                                     for p in entry.local_patterns()):
                found.append(osp.join(folder, name))
    if not found:
        return None
    return sorted(found, key=lambda p: (CHECKPOINT_SUFFIXES.index(osp.splitext(p)[1]), len(p), p))[0]


def runnable_entries() -> List[ModelZooEntry]:
    """The aliases that name a model config (and so can run), sorted."""
    return sorted((e for e in model_zoo().values() if e.config and e.task), key=lambda e: e.alias)


def tasks() -> List[str]:
    """Tasks with at least one runnable alias (``--task`` choices)."""
    return sorted({e.task for e in runnable_entries()})


def _size_order(size: str) -> Tuple[float, str]:
    number = re.match(r'\d+(?:\.\d+)?', size)
    return (float(number.group()) if number else float('inf'), size)


def sizes() -> List[str]:
    """Sizes of the runnable aliases (``--size`` choices), smallest first."""
    return sorted({e.size for e in runnable_entries() if e.size}, key=_size_order)


def alias_for(task: str, size: str) -> str:
    """The alias of ``task`` at ``size``, with a clear error when the model zoo has none."""
    alias = f'{task}-{size}'
    entry = get_entry(alias)
    if entry is None or not entry.config:
        available = [e.size for e in runnable_entries() if e.task == task]
        raise ValueError(f'no released {task} model of size {size}; sizes with a {task} model: {available} '
                         '(`sapiens2 models` lists every alias)')
    return alias


def resolve_model(model: str, weights: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """A config path or alias (+ optional weights) -> (config path, checkpoint name or None).

    An existing file wins over an alias of the same name.
    """
    entry = None if osp.exists(model) else get_entry(model)
    if entry is not None:
        from sapiens2.config.packaged import config_path
        if not entry.config:
            raise ValueError(f'{model} ({entry.repo}) is a checkpoint without a model config: use it where a '
                             f'checkpoint goes (init_cfg, load_from, --weights), with a config that fits it')
        return config_path(entry.config), weights or model
    if not osp.isfile(model):
        if model.endswith('.py') or osp.sep in model:
            raise FileNotFoundError(f'Config file {model} does not exist; give a config file or an alias like '
                                    'pose-1b (`sapiens2 models` lists them)')
        raise FileNotFoundError(f'unknown model alias {model!r} and no such config file; aliases look like '
                                'pose-1b (`sapiens2 models` lists them)')
    return model, weights
