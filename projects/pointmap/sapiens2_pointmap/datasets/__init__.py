from .load_pointmap_annotations import LoadPointmapAnnotations
from .pointmap_dataset import PointmapDirDataset
from .pointmap_generate_target import PointmapGenerateTarget

__all__ = ['LoadPointmapAnnotations', 'PointmapDirDataset', 'PointmapGenerateTarget']
