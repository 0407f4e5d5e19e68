from .dense_estimator import DenseEstimator

__all__ = ['DenseEstimator']
