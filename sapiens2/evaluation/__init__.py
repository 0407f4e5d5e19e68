"""Metrics: angle errors (torch-free); the keypoint metrics (mmpose's METRICS) load on first use and register with
the pose part (:mod:`sapiens2.registration`)."""
from sapiens2.utils.lazy_exports import lazy_exports
from sapiens2.utils.optional import is_installed

from .angle_error_stats import AngleErrorStats, angle_error_deg

__getattr__, __dir__ = lazy_exports(__name__, {'KeypointFormatCocoMetric': '.keypoint_format_coco_metric',
                                               'KeypointThresholdMetric': '.keypoint_threshold_metric'})

__all__ = ['AngleErrorStats', 'angle_error_deg'] + \
    ['KeypointFormatCocoMetric', 'KeypointThresholdMetric'] * is_installed('mmpose')
