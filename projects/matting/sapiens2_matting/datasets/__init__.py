from .format_matting_target import FormatMattingTarget
from .generate_trimap import GenerateTrimap, derive_trimap
from .load_matting_annotations import LoadMattingAnnotations
from .matting_dataset import MattingDirDataset

__all__ = ['FormatMattingTarget', 'GenerateTrimap', 'LoadMattingAnnotations', 'MattingDirDataset', 'derive_trimap']
