from .load_normal_annotations import LoadNormalAnnotations
from .normal_dataset import NormalDirDataset

__all__ = ['LoadNormalAnnotations', 'NormalDirDataset']
