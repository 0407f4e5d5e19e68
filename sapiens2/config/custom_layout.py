"""Own layouts in three edits: a config's ``custom_metainfo`` and ``custom_data_root`` fill in what they imply.

MMEngine configs are evaluated once, so a child config that sets ``data_root`` does not reach the dataloaders its
base built from it. The ``custom`` configs (``configs/_base_/datasets/custom_{keypoints,parts}.py``) therefore name
the layout and the data folder in two top-level keys, and :func:`apply_custom_layout` (run by every
``Config.fromfile``, an adaptation: so by training, testing, inference, export, conversion and mmpose's/mmseg's own
APIs alike) writes them where they belong:

* every ``{train,val,test}_dataloader.dataset``: ``data_root`` = ``custom_data_root``; ``metainfo`` = the file
  (keypoints: ``dict(from_file=...)``, which mmpose reads; parts: the classes, palette and flip pairs read here);
* keypoints: ``model.head.out_channels`` = the number of keypoints (mmpose's flip follows the file's ``swap``);
* parts: ``model.decode_head.num_classes`` = the number of classes, every ``swap_seg_labels`` (pipelines,
  ``tta_model``, the top-level variable) = the file's ``flip_pairs`` (none when it has none), and the cross-entropy
  ``class_weight`` = the file's ``class_weight`` (uniform when it has none);
* ``custom_metainfo`` = the file's absolute path, so that the copy a run saves in its work dir loads from anywhere.

A head size the config gives (not None) that disagrees with the file, a misspelt layout key and a top-level
``data_root`` the dataloaders would not read are one line each. Configs without ``custom_metainfo`` are left as they
are (but for the misspelt-key check).
"""
import difflib
from typing import Iterator

from mmengine.config import Config, ConfigDict

from .layout_checks import LayoutMismatchError, swapping_nodes
from .layout_file import PACKAGE_PREFIXES, find_layout_file, num_keypoints, read_parts_metainfo

LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')
LAYOUT_KEYS = ('custom_metainfo', 'custom_data_root')


class LayoutKeyError(ValueError):
    """A misspelt layout key, or a top-level ``data_root`` that the dataloaders would not read."""


def apply_custom_layout(cfg: Config) -> Config:
    """Write ``cfg.custom_metainfo`` / ``cfg.custom_data_root`` into the datasets and the model (module docstring);
    return ``cfg``. Idempotent: :func:`sapiens2.adaptations` applies it to every config file MMEngine reads."""
    _check_layout_keys(cfg)
    path = cfg.get('custom_metainfo')
    if path is None:
        return cfg
    data_root = cfg.get('custom_data_root')
    _check_data_root(cfg, data_root)
    layout_file = find_layout_file(path, cfg.filename)
    if not path.startswith(PACKAGE_PREFIXES):
        cfg.custom_metainfo = layout_file  # a saved copy of the config (the work dir's) finds it from anywhere
    model = cfg.model.get('module', cfg.model)  # tools/test.py --tta wraps the model
    if 'decode_head' in model:
        meta = read_parts_metainfo(layout_file)
        for key in ('num_classes', 'out_channels'):
            _set_head_size(cfg, 'decode_head', key, len(meta['classes']), f'{layout_file} has '
                           f'{len(meta["classes"])} classes', required=key == 'num_classes')
        _apply_parts(cfg, model, meta)
        dataset_meta = {k: meta[k] for k in ('classes', 'palette', 'flip_pairs') if k in meta}
    else:
        count = num_keypoints(layout_file)
        _set_head_size(cfg, 'head', 'out_channels', count, f'{layout_file} has {count} keypoints')
        dataset_meta = dict(from_file=layout_file)
    for dataset in _datasets(cfg):
        dataset.metainfo = ConfigDict(dataset_meta)
        if data_root is not None:
            dataset.data_root = data_root
    return cfg


def _check_layout_keys(cfg: Config) -> None:
    """A top-level key a small edit away from a layout key (``custom_meta_info``, ``custom_dataroot``) is an error:
    ignored, it would train on the base's layout or data folder."""
    for key, value in cfg.items():
        close = difflib.get_close_matches(key, LAYOUT_KEYS, n=1, cutoff=0.8)
        if key not in LAYOUT_KEYS and isinstance(value, str) and close:
            kept = 'layout' if close[0] == 'custom_metainfo' else 'data folder'
            raise LayoutKeyError(f'{cfg.filename or "<config>"}: top-level key {key!r} is not read; did you mean '
                                 f'{close[0]!r}? (as it is, the config would use its base\'s {kept})')


def _check_data_root(cfg: Config, data_root) -> None:
    """A top-level ``data_root`` (the mmseg habit) that differs from the folder the dataloaders read is an error:
    MMEngine evaluates a base's dataloaders with the base's ``data_root``, so a child's is a variable nothing reads.
    With ``custom_data_root`` (``data_root`` here) the dataloaders read it, and a top-level ``data_root`` that the
    base's dataloaders were built with (a base's variable, e.g. the nano configs') follows it."""
    given = cfg.get('data_root')
    built = next((d.get('data_root') for d in _datasets(cfg)), None)
    used = data_root or built
    if data_root is not None and given == built:
        cfg.data_root = given = data_root
    if given is not None and given != used:
        raise LayoutKeyError(
            f'{cfg.filename or "<config>"}: data_root = {given!r} does not reach the dataloaders, which read '
            f'{used!r}: the base config built them from its own data_root before this file was read (MMEngine '
            f'evaluates each file once); set custom_data_root = {given!r} instead')


def _set_head_size(cfg: Config, head_key: str, key: str, size: int, because: str, required: bool = True) -> None:
    """Set the head's ``key`` to the metainfo's ``size``; a config value that disagrees (None: not set, take the
    metainfo's) is a :class:`LayoutMismatchError` rather than silently replaced."""
    head = cfg.model.get('module', cfg.model)[head_key]
    given = head.get(key)
    if given is not None and given != size:
        raise LayoutMismatchError(
            f'{cfg.filename or "<config>"}: model.{head_key}.{key} = {given} but custom_metainfo {because}; set '
            f'model.{head_key}.{key} = {size}, or None to take it from the metainfo file (it is what the head is '
            'built with)')
    if required or given is not None:
        head[key] = size


def _apply_parts(cfg: Config, model: ConfigDict, meta: dict) -> None:
    """The file's flip pairs everywhere the config names ``swap_seg_labels`` (pipelines, ``tta_model``, the top-level
    variable the recipe shares them by, so that a saved copy holds no other layout's pairs), its class weights in
    the cross-entropy."""
    if 'swap_seg_labels' in cfg:
        cfg.swap_seg_labels = meta['flip_pairs']
    for key in list(cfg.keys()):
        for _, node in swapping_nodes(cfg[key]):
            transform = node.get('type') == 'RandomFlip'
            node.swap_seg_labels = (meta['flip_pairs'] or None) if transform else meta['flip_pairs']
    losses = model.decode_head.get('loss_decode', [])
    for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
        if 'class_weight' in loss:
            loss.class_weight = meta.get('class_weight')


def _datasets(cfg: Config, loaders=LOADERS) -> Iterator[ConfigDict]:
    """The datasets of the config's dataloaders, through dataset wrappers: ``RepeatDataset`` (``dataset``),
    ``ConcatDataset`` (``datasets``: each of them; the wrapper takes no ``metainfo``). mmpose's ``CombinedDataset``
    is a dataset of the layout itself (its ``metainfo``; its parts keep theirs, converted by their pipelines)."""
    for name in loaders:
        yield from _leaf_datasets((cfg.get(name) or {}).get('dataset'))


def _leaf_datasets(dataset) -> Iterator[ConfigDict]:
    if dataset is None:
        return
    if 'dataset' in dataset:
        yield from _leaf_datasets(dataset.dataset)
    elif isinstance(dataset.get('datasets'), (list, tuple)) and \
            not str(dataset.get('type', '')).endswith('CombinedDataset'):
        for part in dataset.datasets:
            yield from _leaf_datasets(part)
    else:
        yield dataset
