from .angle_error_stats import AngleErrorStats, angle_error_deg

__all__ = ['AngleErrorStats', 'angle_error_deg']
