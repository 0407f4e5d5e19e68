"""Data structures and the geometry shared by data, models and inference (loaded on first use, PEP 562)."""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'DenseDataSample': '.dense_data_sample', 'letterbox': '.letterbox', 'letterbox_geometry': '.letterbox',
    'unletterbox': '.letterbox', 'update_intrinsics': '.letterbox'
})

__all__ = ['DenseDataSample', 'letterbox', 'letterbox_geometry', 'unletterbox', 'update_intrinsics']
