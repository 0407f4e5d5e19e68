"""Layout checks of a pose or segmentation config, before any module is built.

A model trained on data of another layout fails late and raw: ``head.out_channels`` 308 on COCO-17 data is a
``RuntimeError`` about tensor sizes inside the loss, ``num_classes`` below the dataset's classes an ``IndexError`` in
the cross-entropy, the 308-partition metric on 17 keypoints an ``IndexError`` at the first validation, and the
29-class left/right pairs of a flip swap unrelated labels of other classes without any error.
:func:`check_layout` reads each dataloader's dataset metainfo from the config (the dataset class's ``METAINFO`` or
the config's ``metainfo``, ``from_file`` included; no annotation is read) and raises :class:`LayoutMismatchError`,
one line per config key, naming the key and the value that fits. The 29-class flip pairs inherited by a config
whose dataset has other classes are replaced by the dataset's own left/right pairs
(:func:`~sapiens2.metainfo.seg_flip_pairs.seg_flip_pairs`; none when its class names say no side), with one
:class:`LayoutNotice`.
"""
import copy
import warnings
from collections.abc import Iterator, Mapping
from typing import Optional

from mmengine.config import Config

from sapiens2.metainfo.seg29 import seg29_flip_pairs, seg29_metainfo
from sapiens2.metainfo.seg_flip_pairs import seg_flip_pairs

from .known_names import registered_objects

LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')
EVALUATORS = {'val_dataloader': 'val_evaluator', 'test_dataloader': 'test_evaluator'}
#: Metrics made for one keypoint layout: type -> the number of keypoints they score.
LAYOUT_METRICS = {'KeypointFormatCocoMetric': 308, 'CocoWholeBodyMetric': 133}


class LayoutMismatchError(ValueError):
    """The model, a metric or a flip of the config does not fit the keypoints or classes of its dataset."""


class LayoutNotice(UserWarning):
    """A setting of the 29-class layout was replaced by the one of the dataset's own classes."""


def check_layout(cfg: Config) -> None:
    """Raise :class:`LayoutMismatchError` for each head, loss, metric or flip of ``cfg`` that does not fit the
    keypoints or classes of its datasets; replace inherited 29-class flip pairs (with a :class:`LayoutNotice`)."""
    scope = cfg.get('default_scope')
    datasets = {loader: found for loader in LOADERS
                if (found := _dataset_metainfo(cfg.get(loader), f'{loader}.dataset', scope)) is not None}
    model = cfg.get('model') if isinstance(cfg.get('model'), Mapping) else {}
    problems: dict[str, str] = {}  # config key -> line; the first dataset that disagrees names it
    for path, head in _seg_heads(model):
        _add(problems, _class_weight_problems(path, head))
    for loader, (where, meta) in datasets.items():
        if meta.get('num_keypoints'):
            _add(problems, _keypoint_problems(model, where, meta['num_keypoints']))
            _add(problems, _metric_problems(cfg.get(EVALUATORS.get(loader, '')), EVALUATORS.get(loader), where,
                                            meta['num_keypoints']))
        if meta.get('classes'):
            for path, head in _seg_heads(model):
                _add(problems, _class_problems(path, head, where, meta['classes']))
    replaced = _fit_flip_pairs(cfg, datasets, problems)
    if problems:
        source = getattr(cfg, 'filename', None) or '<config>'
        raise LayoutMismatchError('\n'.join(f'{source}: {line}' for line in problems.values()))
    if replaced:
        source = getattr(cfg, 'filename', None) or '<config>'
        warnings.warn(LayoutNotice(f'{source}: {replaced}'), stacklevel=2)


def _add(problems: dict, found: dict) -> None:
    for key, line in found.items():
        problems.setdefault(key, line)


# -------------------------------------------------------------------------------------------------- metainfo
def _dataset_metainfo(loader, path: str, scope: Optional[str]) -> Optional[tuple[str, dict]]:
    """(key path, metainfo) of a dataloader's dataset (through wrappers such as RepeatDataset), or None."""
    dataset = loader.get('dataset') if isinstance(loader, Mapping) else None
    while isinstance(dataset, Mapping) and 'metainfo' not in dataset and (
            isinstance(dataset.get('dataset'), Mapping) or dataset.get('datasets')):
        inner = dataset.get('dataset')
        dataset, path = (inner, f'{path}.dataset') if isinstance(inner, Mapping) else \
            (dataset['datasets'][0], f'{path}.datasets[0]')
    if not isinstance(dataset, Mapping):
        return None
    meta = _load_metainfo(dataset, scope)
    return None if meta is None else (f'{path} ({_type_name(dataset)})', meta)


def _load_metainfo(dataset: Mapping, scope: Optional[str]) -> Optional[dict]:
    """The metainfo the dataset would have, from its class and the config (``from_file`` read); None when that
    cannot be told without building it (its build reports the problem)."""
    from mmpose.datasets.datasets.utils import parse_pose_metainfo
    cls = next((c for c in registered_objects(dataset.get('type'), scope) if hasattr(c, '_load_metainfo')), None)
    if cls is None:
        return None
    given = dataset.get('metainfo')
    try:
        with warnings.catch_warnings():  # mmpose's note on a from_file found in its package: the build repeats it
            warnings.simplefilter('ignore')
            meta = cls._load_metainfo(copy.deepcopy(dict(given)) if isinstance(given, Mapping) else None)
            if ('from_file' in meta or 'keypoint_info' in meta) and 'num_keypoints' not in meta:
                meta = parse_pose_metainfo(dict(meta))  # a wrapper (CombinedDataset) keeps it unparsed
    except Exception:  # noqa: BLE001  (a missing metainfo file or a bad entry: the dataset's build names it)
        return None
    return meta if isinstance(meta, Mapping) else None


def _type_name(node: Mapping) -> str:
    kind = node.get('type')
    return kind.rsplit('.', 1)[-1] if isinstance(kind, str) else getattr(kind, '__name__', str(kind))


# ------------------------------------------------------------------------------------------------------ pose
def _keypoint_problems(model: Mapping, where: str, num_keypoints: int) -> dict[str, str]:
    head = model.get('head')
    channels = head.get('out_channels') if isinstance(head, Mapping) else None
    if not isinstance(channels, int) or channels == num_keypoints:
        return {}
    return {'model.head.out_channels': f'model.head.out_channels = {channels} but {where} has {num_keypoints} '
                                       f'keypoints; set model.head.out_channels = {num_keypoints}'}


def _metric_problems(evaluator, key: Optional[str], where: str, num_keypoints: int) -> dict[str, str]:
    problems = {}
    for path, metric in _metrics(evaluator, key or ''):
        kind = _type_name(metric)
        needed = LAYOUT_METRICS.get(kind)
        if needed is not None and needed != num_keypoints:
            problems[path] = (f'{path}: {kind} scores {needed}-keypoint predictions but {where} has '
                              f'{num_keypoints} keypoints; use CocoMetric (or remove it)')
        partitions = metric.get('partitions')
        indices = [i for ids in partitions.values() for i in ids] if isinstance(partitions, Mapping) else []
        if indices and max(indices) >= num_keypoints:
            problems[path] = (f'{path}.partitions: {kind} names keypoint {max(indices)} but {where} has '
                              f'{num_keypoints} keypoints; give partitions of your keypoints or remove this metric '
                              f'(its partitions are those of another layout)')
    return problems


def _metrics(evaluator, path: str) -> Iterator[tuple[str, Mapping]]:
    if isinstance(evaluator, Mapping) and isinstance(evaluator.get('metrics'), (list, tuple, Mapping)):
        yield from _metrics(evaluator['metrics'], f'{path}.metrics')
    elif isinstance(evaluator, Mapping):
        yield path, evaluator
    elif isinstance(evaluator, (list, tuple)):
        for i, metric in enumerate(evaluator):
            yield from _metrics(metric, f'{path}[{i}]')


# ------------------------------------------------------------------------------------------------------- seg
def _seg_heads(model: Mapping) -> Iterator[tuple[str, Mapping]]:
    for key in ('decode_head', 'auxiliary_head'):
        heads = model.get(key)
        if isinstance(heads, Mapping):
            yield f'model.{key}', heads
        elif isinstance(heads, (list, tuple)):
            yield from ((f'model.{key}[{i}]', h) for i, h in enumerate(heads) if isinstance(h, Mapping))


def _class_problems(path: str, head: Mapping, where: str, classes) -> dict[str, str]:
    num_classes = head.get('num_classes')
    if not isinstance(num_classes, int) or num_classes == len(classes):
        return {}
    shown = ', '.join(map(str, classes[:6])) + (', ...' if len(classes) > 6 else '')
    return {f'{path}.num_classes': f'{path}.num_classes = {num_classes} but {where} has {len(classes)} classes '
                                   f'({shown}); set {path}.num_classes = {len(classes)}'}


def _class_weight_problems(path: str, head: Mapping) -> dict[str, str]:
    num_classes, losses = head.get('num_classes'), head.get('loss_decode')
    losses = [losses] if isinstance(losses, Mapping) else losses if isinstance(losses, (list, tuple)) else []
    problems = {}
    for i, loss in enumerate(losses):
        key = f'{path}.loss_decode' + (f'[{i}]' if isinstance(head.get('loss_decode'), (list, tuple)) else '')
        weights = loss.get('class_weight') if isinstance(loss, Mapping) else None
        if isinstance(num_classes, int) and isinstance(weights, (list, tuple)) and len(weights) != num_classes:
            problems[f'{key}.class_weight'] = (
                f'{key}.class_weight has {len(weights)} weights but {path}.num_classes = {num_classes}; give '
                f'{num_classes} weights (one per class) or remove class_weight')
    return problems


def _fit_flip_pairs(cfg: Config, datasets: dict, problems: dict) -> str:
    """Check every ``swap_seg_labels`` against its dataset's classes; replace the 29-class pairs where the classes
    are others (in place). Returns the notice for the replacements ('' when none)."""
    seg29_pairs, seg29_classes = seg29_flip_pairs(), tuple(seg29_metainfo()['classes'])
    places = [(f'{loader}.dataset.pipeline{p}', node, datasets[loader][1]) for loader in datasets
              for p, node in swapping_nodes(_pipeline(cfg.get(loader)))]
    test = next((datasets[loader][1] for loader in reversed(LOADERS) if loader in datasets), None)
    tta_model = cfg.get('tta_model')
    if isinstance(tta_model, Mapping) and 'swap_seg_labels' in tta_model and test is not None:
        places.append(('tta_model', tta_model, test))
    replaced, own = [], None
    for path, node, meta in places:
        classes = tuple(meta.get('classes') or ())
        pairs = [tuple(pair) for pair in node['swap_seg_labels'] or ()]
        if not classes or classes == seg29_classes:
            continue
        if pairs == seg29_pairs:
            try:
                own = [[classes[a], classes[b]] for a, b in seg_flip_pairs(meta)]
            except ValueError as err:
                problems[f'{path}.metainfo'] = f'{path}: {err}'
                continue
            node['swap_seg_labels'] = [[classes.index(a), classes.index(b)] for a, b in own]
            replaced.append(path)
        elif any(not 0 <= i < len(classes) for pair in pairs for i in pair):
            problems[f'{path}.swap_seg_labels'] = (
                f'{path}.swap_seg_labels = {[list(p) for p in pairs]} names classes beyond the {len(classes)} '
                f'of the dataset; give the left/right pairs of its classes (class ids), or []')
    if not replaced:
        return ''
    return (f'the 29-class left/right pairs of swap_seg_labels ({", ".join(replaced)}) do not fit the dataset\'s '
            f'classes; using its own: {own or "none"} (metainfo flip_pairs, or left/right class names)')


def _pipeline(loader) -> list:
    dataset = loader.get('dataset') if isinstance(loader, Mapping) else None
    while isinstance(dataset, Mapping) and 'pipeline' not in dataset and isinstance(dataset.get('dataset'), Mapping):
        dataset = dataset['dataset']
    pipeline = dataset.get('pipeline') if isinstance(dataset, Mapping) else None
    return pipeline if isinstance(pipeline, list) else []


def swapping_nodes(node, path: str = '') -> Iterator[tuple[str, Mapping]]:
    """(path, transform) of every transform with ``swap_seg_labels``, within RandomApply/TestTimeAug too."""
    if isinstance(node, Mapping):
        if 'swap_seg_labels' in node:
            yield path, node
        for key, value in node.items():
            if isinstance(value, (list, tuple, Mapping)):
                yield from swapping_nodes(value, f'{path}.{key}')
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from swapping_nodes(value, f'{path}[{i}]')
