from .dense_data_sample import DenseDataSample

__all__ = ['DenseDataSample']
