from sapiens2.utils.optional import is_installed

from .angle_error_stats import AngleErrorStats, angle_error_deg

__all__ = ['AngleErrorStats', 'angle_error_deg']

if is_installed('mmpose'):
    from .keypoint_format_coco_metric import KeypointFormatCocoMetric  # noqa: F401  (mmpose METRICS)
    from .keypoint_threshold_metric import KeypointThresholdMetric  # noqa: F401  (mmpose METRICS)
    __all__ += ['KeypointFormatCocoMetric', 'KeypointThresholdMetric']
