"""Early checks of a config: ``type`` names with close-name suggestions for typos, misspelled top-level keys,
values of the wrong type, and a strategy without its runner.

MMEngine reports an unknown type only when that module is built, deep inside runner construction, and without
suggestions. :func:`check_config_types` walks the whole config up front and raises :class:`UnknownTypeError` naming
each unknown type, where it is (dotted key path), and the closest registered names (difflib). A misspelled top-level
key (``load_form``) is silently ignored by the Runner: :func:`check_top_level_keys` warns with the key it resembles.
A wrong-typed value (``lr='fast'``) fails deep inside torch or MMEngine: :func:`check_config_values` raises
:class:`ConfigValueError` up front. MMEngine's ``Runner`` silently ignores a ``strategy`` (e.g. FSDP), which only
``FlexibleRunner`` uses: :func:`check_strategy_runner`. A pose decoder (codec) whose ``input_size`` differs from
the crop size of the pipelines decodes keypoints to the wrong scale, silently: :func:`check_codec_input_size`.
"""
import contextlib
import difflib
import importlib
import re
import warnings
from collections.abc import Iterator, Mapping
from typing import Callable, NamedTuple, Optional, Sequence

from mmengine.config import Config
from mmengine.registry import RUNNERS
from mmengine.runner import FlexibleRunner

from .argument_checks import check_config_arguments
from .known_names import DATA_KEYS, all_registries, registered_names, runner_keys, strip_scope
from .layout_checks import check_layout


class UnknownTypeError(ValueError):
    """A config names a ``type`` that no registry knows."""


class ConfigValueError(ValueError):
    """A config value has the wrong type or range (e.g. ``lr='fast'``)."""


class ConfigKeyWarning(UserWarning):
    """A top-level config key that nothing reads and that resembles one the Runner reads (e.g. ``load_form``)."""


def check_config(cfg: Config, check_data_layout: bool = True) -> None:
    """All checks of this module (called by ``tools/train.py`` and ``tools/test.py`` after loading a config), then
    the arguments of every module (:mod:`.argument_checks`) and, with ``check_data_layout``, the layout of the
    model against the datasets (:mod:`.layout_checks`). Without it (inference, export, conversion: nothing is
    trained or evaluated) the type names are checked in what those build, :data:`BUILT_WITHOUT_DATA`."""
    check_model_family(cfg)
    check_config_types(cfg, None if check_data_layout else BUILT_WITHOUT_DATA)
    check_config_arguments(cfg)
    check_config_values(cfg)
    check_top_level_keys(cfg)
    check_strategy_runner(cfg)
    check_codec_input_size(cfg)
    if check_data_layout:
        check_layout(cfg)


# ------------------------------------------------------------------------------------------------ top-level keys
def check_top_level_keys(cfg: Config | Mapping) -> None:
    """Warn (:class:`ConfigKeyWarning`) about each top-level key that is not read but resembles a key that is.

    A config's own variables (``train_pipeline``, ``data_root``...) are left alone: only a key within a small edit of
    a Runner key, holding a value of the type that key takes, is reported. A key whose value equals the value of the
    Runner key it resembles is the variable that key was built from (``optim_wrapper = dict(**cpu_optim_wrapper)``),
    not a misspelling.
    """
    known = runner_keys()
    source = getattr(cfg, 'filename', None) or '<config>'
    keys = cfg.to_dict() if isinstance(cfg, Config) else dict(cfg)
    for key, value in keys.items():
        if key in known or key.startswith('_'):
            continue
        close = [name for name in difflib.get_close_matches(key, known, n=3, cutoff=0.8)
                 if _takes(known[name], value) and keys.get(name) != value]
        if close:
            suggestion = ' or '.join(repr(c) for c in close)
            warnings.warn(ConfigKeyWarning(f'{source}: top-level key {key!r} is not used by the runner; did you mean '
                                           f'{suggestion}? (it is ignored as it is)'), stacklevel=2)


def _takes(types: tuple, value) -> bool:
    return bool in types if isinstance(value, bool) else isinstance(value, types)


# ------------------------------------------------------------------------------------------------------- values
class _Rule(NamedTuple):
    path: str  # regular expression matched against the whole dotted key path
    ok: Callable[[object], bool]
    expected: str


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_OPTIMIZER = r'optim_wrapper(\.[^.\[]+)?\.optimizer\.'
_VALUE_RULES = (
    _Rule(_OPTIMIZER + 'lr', lambda v: _number(v) and v >= 0, 'a number >= 0, e.g. 1e-4'),
    _Rule(_OPTIMIZER + '(weight_decay|momentum|eps|alpha|dampening)', lambda v: _number(v) and v >= 0,
          'a number >= 0'),
    _Rule(_OPTIMIZER + 'betas', lambda v: isinstance(v, (list, tuple)) and len(v) == 2 and all(map(_number, v)),
          'two numbers, e.g. (0.9, 0.999)'),
    _Rule(r'optim_wrapper(\.[^.\[]+)?\.clip_grad\.max_norm', _number, 'a number'),
    _Rule(r'optim_wrapper(\.[^.\[]+)?\.accumulative_counts', lambda v: _integer(v) and v >= 1, 'an integer >= 1'),
    _Rule(r'optim_wrapper\.paramwise_cfg\.layer_decay_rate', lambda v: _number(v) and 0 < v <= 1,
          'a number in (0, 1]'),
    _Rule(r'param_scheduler(\[\d+\])?\.(begin|end)', _number, 'a number (of iterations or epochs)'),
    _Rule(r'param_scheduler(\[\d+\])?\.(eta_min|eta_min_ratio|start_factor|end_factor|factor|gamma|power)', _number,
          'a number'),
    _Rule(r'param_scheduler(\[\d+\])?\.by_epoch', lambda v: isinstance(v, bool), 'True or False'),
    _Rule(r'param_scheduler(\[\d+\])?\.milestones', lambda v: isinstance(v, (list, tuple)) and all(map(_integer, v)),
          'a list of integers'),
    _Rule(r'train_cfg\.(max_iters|max_epochs|val_interval|val_begin)', lambda v: _integer(v) and v >= 0,
          'an integer >= 0'),
    _Rule(r'(train|val|test)_dataloader\.batch_size', lambda v: _integer(v) and v >= 1, 'an integer >= 1'),
    _Rule(r'(train|val|test)_dataloader\.num_workers', lambda v: _integer(v) and v >= 0, 'an integer >= 0'),
    _Rule(r'default_hooks\.[^.]+\.interval', lambda v: _integer(v) and v >= 1, 'an integer >= 1'),
    _Rule(r'default_hooks\.checkpoint\.max_keep_ckpts', _integer, 'an integer (-1 keeps all)'),
    _Rule(r'randomness\.seed', lambda v: v is None or _integer(v), 'an integer or None'),
    _Rule(r'env_cfg\.dist_cfg\.timeout', lambda v: _number(v) and v > 0, 'a number of seconds > 0'),
    _Rule(r'auto_scale_lr\.base_batch_size', lambda v: _integer(v) and v >= 1, 'an integer >= 1'),
    _Rule(r'load_from', lambda v: v is None or isinstance(v, str), 'a checkpoint path or None'),
    _Rule(r'(resume|load_strict|trust_checkpoint|allow_non_finite_weights)', lambda v: isinstance(v, bool),
          'True or False'),
)


def check_config_values(cfg: Config | Mapping) -> None:
    """Raise :class:`ConfigValueError` listing every value of a well-known key (learning rate, schedule lengths,
    batch sizes, intervals...) whose type or range is wrong, e.g. ``optim_wrapper.optimizer.lr = 'fast'``."""
    problems = []
    for path, value in _iter_values(cfg.to_dict() if isinstance(cfg, Config) else cfg):
        rule = next((r for r in _VALUE_RULES if re.fullmatch(r.path, path)), None)
        if rule is not None and not rule.ok(value):
            fix = ''
            if isinstance(value, str):
                with contextlib.suppress(ValueError):
                    float(value)
                    fix = f' (write it without quotes: {value})'
            problems.append(f'  {path} = {value!r} ({type(value).__name__}); expected {rule.expected}{fix}')
    if problems:
        source = getattr(cfg, 'filename', None) or '<config>'
        raise ConfigValueError(f'Wrong value(s) in {source}:\n' + '\n'.join(problems) +
                               '\nFix them in the config or in --cfg-options.')


def _iter_values(node, path: str = '') -> Iterator[tuple[str, object]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key not in DATA_KEYS:
                yield from _iter_values(value, f'{path}.{key}' if path else str(key))
    elif isinstance(node, (list, tuple)) and not (path.endswith(('betas', 'milestones'))):
        for i, value in enumerate(node):
            yield from _iter_values(value, f'{path}[{i}]')
    else:
        yield path, node


def check_strategy_runner(cfg: Config | Mapping) -> None:
    """Raise ``ValueError`` if the config sets a ``strategy`` but its ``runner_type`` is not a ``FlexibleRunner``."""
    runner_type = cfg.get('runner_type', 'Runner')
    runner = RUNNERS.get(runner_type) if isinstance(runner_type, str) else runner_type
    if cfg.get('strategy') and runner is not None and not issubclass(runner, FlexibleRunner):
        source = getattr(cfg, 'filename', None) or '<config>'
        raise ValueError(f"{source}: strategy={cfg['strategy'].get('type')} is ignored by runner_type="
                         f"'{runner_type}'; only FlexibleRunner uses strategies. Set runner_type = 'FlexibleRunner' "
                         "(see configs/_base_/strategies/fsdp.py) or remove the strategy.")


class ForeignModelError(ValueError):
    """A config of a model family sapiens2 does not train or run (an mmdet detector)."""


def check_model_family(cfg: Config | Mapping) -> None:
    """Raise :class:`ForeignModelError` for an mmdet detection config (``default_scope = 'mmdet'``), which the
    type check would report as typos (mmdet's ``nms`` is a function name, not a registered type)."""
    model = cfg.get('model') if isinstance(cfg.get('model'), Mapping) else {}
    if cfg.get('default_scope') != 'mmdet':
        return
    source = getattr(cfg, 'filename', None) or '<config>'
    raise ForeignModelError(
        f"{source} is an mmdet detection config (model {model.get('type', '?')}), not a sapiens2 model config: "
        'sapiens2 trains and runs its pose, segmentation and dense models. A person detector goes with sapiens2-infer '
        f'--det-config {source} --det-checkpoint ...; give a sapiens2 config as --model (`sapiens2 configs` lists '
        'them).')


#: The top-level keys whose modules inference, export and conversion build.
BUILT_WITHOUT_DATA = ('model', 'test_dataloader', 'infer_task')
#: The order in which registries import their lazy locations when a name is looked for: models, transforms and
#: datasets first, visualizers last (mmpose's import its APIs, and those mmdet's: seconds that a config naming no
#: visualizer need not pay); a registry not named here comes in between.
_LOCATIONS_FIRST = ('model', 'transform', 'dataset', 'keypoint codec')
_LOCATIONS_LAST = ('visualizer', 'vis_backend')


def check_config_types(cfg: Config | Mapping, keys: Optional[Sequence[str]] = None) -> None:
    """Raise :class:`UnknownTypeError` if a ``type`` (or ``runner_type``) in ``cfg`` (in its top-level ``keys``: all
    by default) is in no registry."""
    tree = cfg.to_dict() if isinstance(cfg, Config) else dict(cfg)
    found = list(_iter_types(tree if keys is None else {key: tree[key] for key in keys if key in tree}))
    _import_registries({cfg.get('default_scope')} | {name.rsplit('.', 1)[0] for _, name in found if '.' in name})
    known = registered_names(import_locations=False)
    unknown = _unknown(found, known)
    # maybe registered lazily: import the registries' locations (those of names a config rarely has last) until
    # every name is found
    order = {**dict.fromkeys(_LOCATIONS_FIRST, 0), **dict.fromkeys(_LOCATIONS_LAST, 2)}
    for registry in sorted(all_registries(), key=lambda registry: order.get(registry.name, 1)):
        if not unknown:
            break
        if registry.name != 'inferencer':  # a config never names one
            with contextlib.suppress(ImportError):
                registry.import_from_location()
            known = registered_names(import_locations=False)
            unknown = _unknown(unknown, known)
    if unknown:
        source = getattr(cfg, 'filename', None) or '<config>'
        lines = [f"  {path} = '{name}'{_suggest(strip_scope(name), known)}" for path, name in unknown]
        raise UnknownTypeError(f'Unknown type name(s) in {source}:\n' + '\n'.join(lines) +
                               '\nFix the spelling, or add the package that registers it to custom_imports.')


def _import_registries(scopes: set) -> None:
    """Import the registry modules of the scopes a config names (``mmpose.registry``...), so that their registries
    are searched: until a model is built, a pose or seg library may not be imported at all."""
    for scope in scopes:
        if isinstance(scope, str) and scope.isidentifier():
            with contextlib.suppress(ImportError):
                importlib.import_module(f'{scope}.registry')


def _unknown(found: list[tuple[str, str]], known: set[str]) -> list[tuple[str, str]]:
    return [(path, name) for path, name in found if strip_scope(name) not in known]


def _iter_types(node, path: str = '') -> Iterator[tuple[str, str]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            child = f'{path}.{key}' if path else str(key)
            if key in DATA_KEYS:
                continue
            if key in ('type', 'runner_type') and isinstance(value, str):
                yield child, value
            else:
                yield from _iter_types(value, child)
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _iter_types(value, f'{path}[{i}]')


def _suggest(name: str, known: set[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if not close:
        close = [k for k in known if k.lower() == name.lower()]
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ' (no similar registered name)'


# ------------------------------------------------------------------------------------------------- pose codec
def check_codec_input_size(cfg: Config | Mapping) -> None:
    """Raise :class:`ConfigValueError` if ``model.head.decoder.input_size`` (the size the pose decoder maps heatmaps
    back to) differs from an ``input_size`` in a dataloader's pipeline (the crop of ``TopdownAffine``, a target
    encoder): keypoints would be decoded to the wrong place without any error."""
    head = (cfg.get('model') or {}).get('head')
    decoder = head.get('decoder') if isinstance(head, Mapping) else None
    if not isinstance(decoder, Mapping) or decoder.get('input_size') is None:
        return
    expected = _size(decoder['input_size'])
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        for path, value in _iter_input_sizes(cfg.get(loader), loader):
            if _size(value) != expected:
                source = getattr(cfg, 'filename', None) or '<config>'
                raise ConfigValueError(
                    f'{source}: model.head.decoder.input_size = {expected} but {path} = {_size(value)}: the decoder '
                    'maps keypoints back from a crop of its own input_size, so they would land in the wrong place. '
                    'Give both the same (width, height), e.g. one `codec` dict used as the decoder and as '
                    "input_size=codec['input_size'] in the pipelines (as the configs under configs/pose do).")


def _iter_input_sizes(node, path: str, in_pipeline: bool = False) -> Iterator[tuple[str, object]]:
    """(dotted path, value) of every ``input_size`` under a ``pipeline`` of a dataloader config."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == 'input_size' and in_pipeline:
                yield f'{path}.{key}', value
            elif key not in DATA_KEYS:
                yield from _iter_input_sizes(value, f'{path}.{key}', in_pipeline or key == 'pipeline')
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _iter_input_sizes(value, f'{path}[{i}]', in_pipeline)


def _size(value) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value, )
