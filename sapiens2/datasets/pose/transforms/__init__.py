"""Pose transforms that mmpose lacks (registered into mmpose's TRANSFORMS)."""
from .check_image_size import CheckAnnotatedImageSize
from .coarse_dropout import CoarseDropout
from .part_keypoint_weights import PartKeypointWeights
from .random_blur import RandomBlur
from .random_empty_crop import RandomEmptyCrop
from .topdown_affine import Sapiens2TopdownAffine

__all__ = ['CheckAnnotatedImageSize', 'CoarseDropout', 'PartKeypointWeights', 'RandomBlur', 'RandomEmptyCrop',
           'Sapiens2TopdownAffine']
