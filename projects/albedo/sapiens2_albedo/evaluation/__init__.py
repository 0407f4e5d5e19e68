from .albedo_metric import AlbedoMetric

__all__ = ['AlbedoMetric']
