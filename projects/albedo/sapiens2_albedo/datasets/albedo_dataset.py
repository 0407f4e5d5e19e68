"""Directory dataset of albedo: ``rgb/*.png``, ``albedo/*.png``, ``mask/*.png``, matched by file name."""
from sapiens2.datasets.dense_dir_dataset import DenseDirDataset
from sapiens2.registry import DATASETS


@DATASETS.register_module()
class AlbedoDirDataset(DenseDirDataset):
    """Images with same-named albedo and mask images; read and checked by ``LoadAlbedoAnnotations``."""

    COMPANIONS = dict(mask_path=('mask', ('.png', )), albedo_path=('albedo', ('.png', )))
