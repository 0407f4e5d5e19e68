from .normal_metric import NormalMetric

__all__ = ['NormalMetric']
