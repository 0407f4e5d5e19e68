"""Directory dataset of metric depth with cameras (the official ``PointmapRenderPeopleDataset`` layout)."""
from sapiens2.datasets.dense_dir_dataset import DenseDirDataset
from sapiens2.registry import DATASETS


@DATASETS.register_module()
class PointmapDirDataset(DenseDirDataset):
    """``rgb/*.png``, ``mask/*.png``, ``depth/*.npy`` (HxW metric z-depth), ``camera_intrinsics/*.txt`` (3x3) and
    ``camera_extrinsics/*.txt`` (4x4 world-to-camera), matched by file name; read by ``LoadPointmapAnnotations``."""

    COMPANIONS = dict(
        mask_path=('mask', ('.png', )),
        depth_path=('depth', ('.npy', )),
        intrinsics_path=('camera_intrinsics', ('.txt', )),
        extrinsics_path=('camera_extrinsics', ('.txt', )))
