"""Body-part segmentation data: the 29-class dataset and the transforms mmseg lacks."""
from sapiens2.metainfo.seg29 import load_seg29, seg29_class_weight, seg29_flip_pairs, seg29_metainfo, source_label_map

from .bodypart29_dataset import BodyPart29Dataset
from .check_seg_labels import CheckSegLabels
from .load_seg_annotations import LoadSegAnnotations, decode_label_map
from .random_background import RandomBackground
from .random_gaussian_blur import RandomGaussianBlur
from .random_gaussian_noise import RandomGaussianNoise

__all__ = [
    'BodyPart29Dataset', 'CheckSegLabels', 'LoadSegAnnotations', 'decode_label_map', 'RandomBackground',
    'RandomGaussianBlur', 'RandomGaussianNoise',
    'load_seg29', 'seg29_class_weight', 'seg29_flip_pairs', 'seg29_metainfo', 'source_label_map'
]
