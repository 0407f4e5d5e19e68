"""COCO-WholeBody (133 keypoints) annotations mapped into the 308-keypoint layout, for fine-tuning on public data."""
from typing import Dict, Tuple

import numpy as np
from mmpose.registry import DATASETS

from .keypoints308_dataset import Keypoints308CocoDataset
from .metainfo import NUM_KEYPOINTS, coco_wholebody_to_keypoints308


@DATASETS.register_module()
class CocoWholeBody308Dataset(Keypoints308CocoDataset):
    """COCO-WholeBody JSON read into the 308 layout.

    The 133 keypoints (``keypoints`` 17, ``foot_kpts`` 6, ``face_kpts`` 68, ``lefthand_kpts`` 21, ``righthand_kpts``
    21, concatenated in that order) are placed at their 308 indices through ``coco_wholebody_to_goliath_mapping`` of
    ``keypoints308.json`` (53 shared names). All other 308 keypoints are (0, 0, invisible), so their target weight
    is 0 and they add nothing to the loss.
    """

    PARTS: Tuple[Tuple[str, int], ...] = (('keypoints', 17), ('foot_kpts', 6), ('face_kpts', 68),
                                          ('lefthand_kpts', 21), ('righthand_kpts', 21))
    KEYPOINT_FIELDS: Tuple[str, ...] = tuple(field for field, _ in PARTS)

    def keypoint_schema(self) -> Tuple[Dict[str, int], Tuple[str, ...]]:
        """The five part fields with their lengths; ``keypoints`` (the 17 body points) is required."""
        return dict(self.PARTS), ('keypoints', )

    def read_keypoints(self, ann: dict) -> np.ndarray:
        """Return the (308, 3) keypoints; unmapped COCO-WholeBody points are dropped, unlabelled 308 points are 0."""
        wholebody = np.concatenate([self._part(ann, field, num) for field, num in self.PARTS])
        keypoints = np.zeros((NUM_KEYPOINTS, 3), dtype=np.float32)
        mapping = coco_wholebody_to_keypoints308()
        src, dst = np.array(list(mapping)), np.array(list(mapping.values()))
        keypoints[dst] = wholebody[src]
        keypoints[keypoints[:, 2] <= 0] = 0
        return keypoints

    def _part(self, ann: dict, field: str, num: int) -> np.ndarray:
        if field not in ann:  # the schema check requires "keypoints"; the other parts are optional
            return np.zeros((num, 3), dtype=np.float32)
        return self._as_keypoints(ann[field], num, ann, field)

