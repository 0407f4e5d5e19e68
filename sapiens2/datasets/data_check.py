"""Check a built dataset against its own layout before the first iteration: data that does not match the metainfo
(11 keypoints for a 10-keypoint layout, a label id 7 in 5-class masks, an image without its mask) is one line
naming the file, the annotation or mask, the value and the fix, instead of an error deep inside torch.

Works on any mmpose keypoint dataset (``BaseCocoStyleDataset``: mmpose's ``CocoDataset``, ours) and any mmseg
``BaseSegDataset``, through dataset wrappers. Annotations and label maps are checked whole: the ids of every label
map, read once and cached by path, modification time and size (:mod:`sapiens2.datasets.label_id_cache`), so a map with
an id beyond the classes stops the run before the first iteration instead of an ``IndexError`` in the loss later."""
import functools
import os.path as osp
from typing import Iterator, List, Optional

import numpy as np

from sapiens2.datasets.label_id_cache import LabelIdCache


class DataCheckError(ValueError):
    """The data does not match the dataset's layout (one line: file, entry, value, fix)."""


def leaf_datasets(dataset) -> Iterator:
    """The datasets inside wrappers (``RepeatDataset``, ``ConcatDataset``, mmpose's ``CombinedDataset``)."""
    inner = getattr(dataset, 'datasets', None) or ([dataset.dataset] if hasattr(dataset, 'dataset') else None)
    if inner is None:
        yield dataset
        return
    for child in inner:
        yield from leaf_datasets(child)


def check_dataset(dataset, max_masks: Optional[int] = None) -> Optional[str]:
    """Raise :class:`DataCheckError` when ``dataset`` (any wrapper of pose or seg datasets) does not match its
    layout; return a summary of what was checked (None: no dataset of a kind this checks). ``max_masks``: label
    maps read per segmentation dataset, evenly spaced (None: every one; their ids are cached,
    :class:`~sapiens2.datasets.label_id_cache.LabelIdCache`)."""
    summaries = []
    for leaf in leaf_datasets(dataset):
        if getattr(leaf, '_fully_initialized', True) is False:
            leaf.full_init()
        meta = getattr(leaf, 'metainfo', None) or {}
        if not hasattr(leaf, 'get_data_info'):
            continue
        if len(leaf) == 0:
            raise DataCheckError(empty_dataset_message(leaf))
        if 'num_keypoints' in meta:
            _check_pipeline(leaf, int(meta['num_keypoints']))
            summaries.append(_check_keypoints(leaf, int(meta['num_keypoints'])))
        elif 'classes' in meta:
            summaries.append(_check_label_maps(leaf, len(meta['classes']), max_masks))
    return '; '.join(summaries) or None


def empty_dataset_message(dataset) -> str:
    """The line for a dataset without a sample: where it looked, what for (MMEngine: "need at least one array to
    concatenate" when it serializes the empty list; :mod:`sapiens2.adaptations` raises this instead)."""
    prefix = getattr(dataset, 'data_prefix', None) or {}
    folder = prefix.get('img_path') or prefix.get('img') or getattr(dataset, 'data_root', None) or '?'
    if getattr(dataset, 'ann_file', None):
        where = f'its annotation file {dataset.ann_file} lists no sample'
    else:
        suffix = getattr(dataset, 'img_suffix', None)
        where = f"{folder} holds no {'*' + suffix + ' ' if suffix else ''}images"
    return (f'{type(dataset).__name__}: {where}, so the dataset is empty; check the data folder (custom_data_root, '
            'data_root), data_prefix and the suffixes, and that the data is there.')


def _infos(dataset) -> Iterator[dict]:
    """Each entry as the dataset stores it (MMEngine serializes ``data_list`` after ``full_init``), without the
    metainfo mmpose's ``get_data_info`` deep-copies into every entry."""
    from mmengine.dataset import BaseDataset
    get = functools.partial(BaseDataset.get_data_info, dataset) if isinstance(dataset, BaseDataset) else \
        dataset.get_data_info
    for index in range(len(dataset)):
        yield get(index)


def _source(dataset) -> str:
    return getattr(dataset, 'ann_file', None) or getattr(dataset, 'data_root', None) or type(dataset).__name__


def _check_pipeline(dataset, num_keypoints: int) -> None:
    """The transforms written for one keypoint layout (those with a ``check_layout(num_keypoints)`` method, e.g.
    ``PartKeypointWeights``) against the dataset's layout."""
    for transform in getattr(getattr(dataset, 'pipeline', None), 'transforms', ()):
        if hasattr(transform, 'check_layout'):
            try:
                transform.check_layout(num_keypoints)
            except ValueError as err:
                raise DataCheckError(f'{_source(dataset)} ({num_keypoints}-keypoint layout), pipeline: '
                                     f'{err}') from None


def _check_keypoints(dataset, num_keypoints: int) -> str:
    count = 0
    for info in _infos(dataset):
        keypoints = np.asarray(info.get('keypoints', np.zeros((0, num_keypoints, 2))))
        visible = np.asarray(info.get('keypoints_visible', np.zeros(keypoints.shape[:-1])))
        where = f"{_source(dataset)}: annotation {info.get('id', '?')} (image {info.get('img_path', '?')})"
        if keypoints.ndim == 3 and keypoints.shape[1] != num_keypoints:
            raise DataCheckError(
                f'{where} has {keypoints.shape[1]} keypoints, but the dataset\'s layout '
                f"({dataset.metainfo.get('dataset_name', type(dataset).__name__)}) has {num_keypoints}; give every "
                f'annotation the layout\'s {num_keypoints} keypoints ({3 * num_keypoints} values x, y, v), or point '
                'the dataset (custom_metainfo) at the layout the data was made for.')
        if not np.isfinite(keypoints).all():
            raise DataCheckError(f'{where} has a keypoint coordinate that is not a finite number; give numbers '
                                 '(a keypoint that is not labelled is 0, 0, 0).')
        if visible.size and (not np.isfinite(visible).all() or visible.min() < 0):
            value = visible[~np.isfinite(visible) | (visible < 0)].ravel()[0]
            raise DataCheckError(f'{where} has a keypoint visibility of {value:g}; visibilities are 0 (not '
                                 'labelled), 1 (labelled, hidden) or 2 (labelled, visible).')
        count += len(keypoints)
    return f'{_source(dataset)}: {count} keypoint annotations match the {num_keypoints}-keypoint layout'


def _check_label_maps(dataset, num_classes: int, max_masks: Optional[int]) -> str:
    infos = list(_infos(dataset))
    for info in infos:
        for key in ('img_path', 'seg_map_path'):
            path = info.get(key)
            if path is not None and not osp.isfile(path):
                other = info.get('img_path' if key == 'seg_map_path' else 'seg_map_path')
                raise DataCheckError(
                    f'{_source(dataset)}: {key} {path} does not exist (its pair: {other}); every image needs its '
                    'label map with the same name stem (check data_prefix, img_suffix and seg_map_suffix).')
    _check_reduce_zero_label(dataset, infos)
    picked = infos if max_masks is None else _evenly_spaced(infos, max_masks)
    ignore_index = int(getattr(dataset, 'ignore_index', 255))
    with LabelIdCache() as cache:
        for info in picked:
            if info.get('seg_map_path') is not None:
                _check_label_map(info, num_classes, ignore_index, cache)
    read = 'every label map read' if len(picked) == len(infos) else \
        f'{len(picked)} of {len(infos)} label maps read (max_masks)'
    return (f'{_source(dataset)}: {len(infos)} image/label-map pairs, {read}, ids within {num_classes} classes or '
            f'{ignore_index}')


#: Class names that say "no body part here": a class 0 so named is pixels of value 0 in the label maps.
BACKGROUND_NAMES = ('background', 'bg', '_background_', 'backdrop')


def _check_reduce_zero_label(dataset, infos: List[dict]) -> None:
    """``reduce_zero_label=True`` on label maps whose 0 is background: mmseg turns 0 into 255 (ignored) and moves
    every other id down by one, so every class would be trained as the one before it, silently."""
    classes = dataset.metainfo.get('classes') or ()
    reduced = getattr(dataset, 'reduce_zero_label', False) or any(i.get('reduce_zero_label') for i in infos[:1])
    if reduced and classes and str(classes[0]).casefold() in BACKGROUND_NAMES:
        raise DataCheckError(
            f'{_source(dataset)}: reduce_zero_label=True, but class 0 of the metainfo is {classes[0]!r}: mmseg would '
            'ignore every pixel of id 0 and train id 1 as class 0, id 2 as class 1... (every class shifted by one). '
            f'For label maps whose 0 is {classes[0]}, set reduce_zero_label=False; keep it only for maps whose 0 is '
            'unlabelled and whose ids start at 1 for the first class of the metainfo.')


def _evenly_spaced(items: List, count: int) -> List:
    if len(items) <= count:
        return list(items)
    return [items[i] for i in np.linspace(0, len(items) - 1, count).round().astype(int)]


def _check_label_map(info: dict, num_classes: int, ignore_index: int, cache: 'LabelIdCache') -> None:
    path = info['seg_map_path']
    height, width, ids = cache.label_ids(path)
    image_height, image_width = cache.image_size(info['img_path'])
    if (height, width) != (image_height, image_width):
        raise DataCheckError(f'{path}: the label map is {width}x{height} but its image '
                             f"{info['img_path']} is {image_width}x{image_height}; each label map has its image's "
                             'size.')
    ids = np.unique(_as_loaded(np.asarray(ids, np.int64), info))
    bad = [int(i) for i in ids if not (0 <= i < num_classes or i == ignore_index)]
    if bad:
        remap = ' after label_map/reduce_zero_label' if info.get('label_map') or info.get('reduce_zero_label') else ''
        raise DataCheckError(
            f'{path}: label ids {bad[:10]}{remap} are neither classes 0..{num_classes - 1} nor {ignore_index} '
            f'(ignore); the dataset\'s metainfo has {num_classes} classes. Fix the label map, or give the metainfo '
            'the classes the masks use.')


def _as_loaded(labels: np.ndarray, info: dict) -> np.ndarray:
    """The ids mmseg's ``LoadAnnotations`` gives: its ``label_map`` remap, then ``reduce_zero_label``."""
    labels = labels.astype(np.int64)
    label_map = info.get('label_map')
    if label_map:
        source = labels.copy()
        for old, new in label_map.items():
            labels[source == old] = new
    if info.get('reduce_zero_label'):
        labels[labels == 0] = 255
        labels = labels - 1
        labels[labels == 254] = 255
    return labels
