"""Base of the directory-layout dense datasets: ``data_root/rgb/<name>.png`` plus same-named companion files."""
import os
import os.path as osp
from typing import Dict, List, Sequence, Tuple

from mmengine.dataset import BaseDataset

IMAGE_SUFFIXES = ('.png', '.jpg', '.jpeg')


def index_folder(folder: str, suffixes: Sequence[str]) -> Dict[str, str]:
    """Map file stem -> path for the files of ``folder`` with one of ``suffixes`` (earlier suffixes win)."""
    index: Dict[str, str] = {}
    for suffix in reversed(tuple(suffixes)):
        for file_name in os.listdir(folder):
            stem, ext = osp.splitext(file_name)
            if ext.lower() == suffix:
                index[stem] = osp.join(folder, file_name)
    return index


class DenseDirDataset(BaseDataset):
    """Images in ``data_root/rgb`` matched by file name with companion files in sibling folders.

    Subclasses set ``COMPANIONS``: data-info key -> (folder, accepted suffixes). Every image must have every
    companion, otherwise loading fails with the missing names. Loading and per-sample validity checks are done by
    the task's loading transform (samples it rejects are re-drawn in training).

    Args:
        data_root: Folder that holds ``rgb/`` and the companion folders.
        pipeline: Transform configs.
        **kwargs: Other :class:`mmengine.dataset.BaseDataset` arguments (``test_mode``, ``indices``...).
    """

    COMPANIONS: Dict[str, Tuple[str, Tuple[str, ...]]] = {}

    def __init__(self, data_root: str, pipeline: Sequence = (), **kwargs) -> None:
        super().__init__(ann_file='', data_root=data_root, pipeline=list(pipeline), **kwargs)

    def _folder(self, name: str) -> str:
        folder = osp.join(self.data_root, name)
        if not osp.isdir(folder):
            expected = ', '.join(['rgb/'] + [f'{sub}/' for sub, _ in self.COMPANIONS.values()])
            raise FileNotFoundError(f'{type(self).__name__}: folder {folder!r} does not exist; data_root must hold '
                                    f'{expected}')
        return folder

    def load_data_list(self) -> List[dict]:
        images = index_folder(self._folder('rgb'), IMAGE_SUFFIXES)
        if not images:
            raise FileNotFoundError(f'{type(self).__name__}: no {IMAGE_SUFFIXES} images in '
                                    f'{osp.join(self.data_root, "rgb")!r}')
        names = sorted(images)
        data_list = [dict(img_path=images[name], sample_name=name) for name in names]
        for key, (sub, suffixes) in self.COMPANIONS.items():
            companions = index_folder(self._folder(sub), suffixes)
            missing = [name for name in names if name not in companions]
            if missing:
                raise FileNotFoundError(
                    f'{type(self).__name__}: {len(missing)} of {len(names)} images have no companion in '
                    f'{osp.join(self.data_root, sub)!r} (e.g. {missing[:3]}); expected <name>{"|".join(suffixes)} '
                    'next to every rgb/<name> image')
            for info in data_list:
                info[key] = companions[info['sample_name']]
        return data_list
