"""308-keypoint pose data: metadata, COCO-style datasets and the transforms mmpose lacks."""
from .coco_wholebody308_dataset import CocoWholeBody308Dataset
from .keypoints308_dataset import AnnotationError, Keypoints308CocoDataset
from .metainfo import (
                       coco_wholebody_to_keypoints308,
                       keypoints308_metainfo,
                       keypoints308_partitions,
                       load_keypoints308_json,
)
from .transforms import CoarseDropout, RandomBlur, Sapiens2TopdownAffine

__all__ = [
    'AnnotationError', 'CocoWholeBody308Dataset', 'Keypoints308CocoDataset', 'coco_wholebody_to_keypoints308',
    'keypoints308_metainfo', 'keypoints308_partitions', 'load_keypoints308_json', 'CoarseDropout', 'RandomBlur',
    'Sapiens2TopdownAffine'
]
