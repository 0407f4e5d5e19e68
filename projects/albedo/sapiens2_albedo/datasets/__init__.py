from .albedo_dataset import AlbedoDirDataset
from .load_albedo_annotations import LoadAlbedoAnnotations

__all__ = ['AlbedoDirDataset', 'LoadAlbedoAnnotations']
