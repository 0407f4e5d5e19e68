from .pointmap_metric import PointmapMetric

__all__ = ['PointmapMetric']
