"""Data structures and the geometry shared by data, models and inference."""
from .dense_data_sample import DenseDataSample
from .letterbox import letterbox, letterbox_geometry, unletterbox, update_intrinsics

__all__ = ['DenseDataSample', 'letterbox', 'letterbox_geometry', 'unletterbox', 'update_intrinsics']
