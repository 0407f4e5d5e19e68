"""Per-part keypoint weights in the training loss, so that 238 face points do not drown the 17 body points."""
from typing import Dict, List

import numpy as np
from mmcv.transforms import BaseTransform
from mmpose.registry import TRANSFORMS


@TRANSFORMS.register_module()
class PartKeypointWeights(BaseTransform):
    """Scale ``dataset_keypoint_weights`` of the keypoints of each named part.

    mmpose's ``GenerateTarget(use_dataset_keypoint_weights=True)`` multiplies the target weights by
    ``dataset_keypoint_weights`` (the metainfo's ``joint_weights``); this sets them per part without a second metainfo
    file. Put it before ``GenerateTarget``. Evaluation does not read the weights.

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

    def transform(self, results: dict) -> dict:
        num_keypoints = results['keypoints'].shape[-2]
        base = results.get('dataset_keypoint_weights')
        scaled = np.ones(num_keypoints, np.float32) if base is None else np.array(base, np.float32)  # (K, )
        for name, weight in self.weights.items():
            ids = self.partitions[name]
            if ids.size and ids.max() >= num_keypoints:
                raise ValueError(f'PartKeypointWeights: part {name!r} has keypoint index {ids.max()}, but the sample '
                                 f'has {num_keypoints} keypoints')
            scaled[ids] *= weight
        results['dataset_keypoint_weights'] = scaled
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(weights={self.weights})'
