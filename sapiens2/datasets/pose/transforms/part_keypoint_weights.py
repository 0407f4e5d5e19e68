"""Per-part keypoint weights in the training loss, so that 238 face points do not drown the 17 body points."""
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

import numpy as np
from mmcv.transforms import BaseTransform
from mmpose.registry import TRANSFORMS

from sapiens2.metainfo import load_metainfo
from sapiens2.structures.keypoint_formats import FORMAT_NAMES, NUM_SOURCE, keypoint_format

#: What a config that inherits this transform for a layout it cannot follow writes instead (one line).
REMEDY = ("drop it from the training pipeline: train_pipeline = [step for step in _base_.train_pipeline if "
          "step['type'] != 'PartKeypointWeights'] (or give it partitions in your layout's keypoint indices)")


@TRANSFORMS.register_module()
class PartKeypointWeights(BaseTransform):
    """Scale ``dataset_keypoint_weights`` of the keypoints of each named part.

    mmpose's ``GenerateTarget(use_dataset_keypoint_weights=True)`` multiplies the target weights by
    ``dataset_keypoint_weights`` (the metainfo's ``joint_weights``); this sets them per part without a second metainfo
    file. Put it before ``GenerateTarget``. Evaluation does not read the weights.

    Partitions in the 308-keypoint layout follow a dataset in one of the keypoint formats
    (:mod:`sapiens2.structures.keypoint_formats`: COCO-17, COCO-WholeBody, BODY_25, OpenPose), told by its keypoint
    count: a point of the format is in the part of the 308 keypoint it is made from (without one, in the format's
    part of that name), so a config that inherits the 308-keypoint recipe fine-tunes on COCO-17 (whose 17 points are
    all ``body``) unchanged. On any other layout the partitions do not fit, it is one error naming the fix
    (:meth:`check_layout`, which the data check runs before the first iteration).

    Args:
        partitions: {part: keypoint indices}, e.g. ``keypoint_partitions`` of
            ``configs/_base_/datasets/keypoints308_partitions.py``.
        weights: {part: weight}; parts not named keep their weight.
    """

    def __init__(self, partitions: Dict[str, List[int]], weights: Dict[str, float]) -> None:
        unknown = sorted(set(weights) - set(partitions))
        if unknown:
            raise KeyError(f'PartKeypointWeights: weights name parts {unknown} that partitions lacks; known: '
                           f'{sorted(partitions)}')
        self.partitions = {name: np.asarray(ids, dtype=np.int64) for name, ids in partitions.items()}
        self.weights = dict(weights)
        self._source_parts = _source_parts(self.partitions)

    def check_layout(self, num_keypoints: int) -> None:
        """Raise ``ValueError`` (naming the part, the index and the fix) when samples of ``num_keypoints`` keypoints
        cannot be weighted."""
        self._part_indices(num_keypoints)

    def transform(self, results: dict) -> dict:
        num_keypoints = results['keypoints'].shape[-2]
        base = results.get('dataset_keypoint_weights')
        scaled = np.ones(num_keypoints, np.float32) if base is None else np.array(base, np.float32)  # (K, )
        for ids, weight in self._part_indices(num_keypoints):
            scaled[ids] *= weight
        results['dataset_keypoint_weights'] = scaled
        return results

    def _part_indices(self, num_keypoints: int) -> List[Tuple[np.ndarray, float]]:
        """(indices in the sample's layout, weight) per weighted part."""
        named = [(name, self.partitions[name], weight) for name, weight in self.weights.items()]
        outside = [(name, ids) for name, ids, _ in named if ids.size and ids.max() >= num_keypoints]
        if not outside:
            return [(ids, weight) for _, ids, weight in named]
        format_parts = _format_parts(num_keypoints, self._source_parts)
        if format_parts is not None:
            return [(np.flatnonzero(format_parts == name), weight) for name, _, weight in named]
        name, ids = outside[0]
        raise ValueError(f'PartKeypointWeights: part {name!r} has keypoint index {ids.max()}, but the sample has '
                         f'{num_keypoints} keypoints (a layout it cannot follow); {REMEDY}')

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(weights={self.weights})'


def _source_parts(partitions: Dict[str, np.ndarray]) -> Optional[Tuple[str, ...]]:
    """The part of each of the 308 keypoints, if the partitions are in that layout (else None)."""
    parts = [''] * NUM_SOURCE
    for name, ids in partitions.items():
        if ids.size and (ids.min() < 0 or ids.max() >= NUM_SOURCE):
            return None
        for index in ids:
            parts[index] = name
    return tuple(parts)


@lru_cache(maxsize=None)
def _format_parts(num_keypoints: int, source_parts: Optional[Tuple[str, ...]]) -> Optional[np.ndarray]:
    """The part of each point of the keypoint format with ``num_keypoints`` points: the part of its first 308
    source, or for a point without one (a jaw point of the 68-point face) the format's own part of that name; None
    where no format has that count or the partitions are not in the 308 layout."""
    if source_parts is None:
        return None
    for format_name in FORMAT_NAMES:
        layout = keypoint_format(format_name)
        if layout.num_keypoints == num_keypoints:
            index = {name: i for i, name in enumerate(_keypoint_names308())}
            own = {k: part for part, (start, stop) in layout.parts.items() for k in range(start, stop)}
            return np.array([source_parts[index[recipe[0][0]]] if recipe else own[k]
                             for k, recipe in enumerate(layout.recipes)])
    return None


@lru_cache(maxsize=1)
def _keypoint_names308() -> Tuple[str, ...]:
    return tuple(load_metainfo('keypoints308.json')['keypoint_names'])
