"""Directory dataset of surface normals: ``rgb/*.png``, ``mask/*.png``, ``normal/*.npy|npz``, matched by file name."""
import os.path as osp
from typing import List, Optional

from sapiens2.datasets.dense_dir_dataset import DenseDirDataset
from sapiens2.registry import DATASETS


@DATASETS.register_module()
class NormalDirDataset(DenseDirDataset):
    """RenderPeople-style normal data matched by file name (``LoadNormalAnnotations`` reads and checks it).

    Args:
        seg_data_root: Optional folder of ``<name>_seg.npy`` 28-class label maps (one for every image, of its size);
            face, hair and mouth pixels are then removed from supervision by the loading transform.
        **kwargs: :class:`DenseDirDataset` arguments (``data_root``, ``pipeline``...).
    """

    COMPANIONS = dict(mask_path=('mask', ('.png', )), normal_path=('normal', ('.npy', '.npz')))

    def __init__(self, seg_data_root: Optional[str] = None, **kwargs) -> None:
        self.seg_data_root = seg_data_root
        super().__init__(**kwargs)

    def load_data_list(self) -> List[dict]:
        data_list = super().load_data_list()
        if self.seg_data_root is not None:
            for info in data_list:
                info['seg_path'] = osp.join(self.seg_data_root, f'{info["sample_name"]}_seg.npy')
            missing = [info['sample_name'] for info in data_list if not osp.isfile(info['seg_path'])]
            if missing:
                raise FileNotFoundError(f'{type(self).__name__}: {len(missing)} of {len(data_list)} images have no '
                                        f'<name>_seg.npy in seg_data_root {self.seg_data_root!r} (e.g. '
                                        f'{missing[:3]}); give every image its seg map, or leave seg_data_root out.')
        return data_list
