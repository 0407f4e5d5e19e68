"""Directory dataset of alpha mattes: ``rgb/``, ``alpha/`` and optional ``foreground/``, ``background/``, ``trimap/``
folders, matched by file name (the layout of common human-matting datasets once their folders are named so)."""
import os.path as osp
from typing import List, Sequence

from sapiens2.datasets.dense_dir_dataset import DenseDirDataset, index_folder
from sapiens2.registry import DATASETS

MAP_SUFFIXES = ('.png', '.tif', '.tiff', '.jpg', '.jpeg')
OPTIONAL_FOLDERS = dict(foreground='foreground_path', background='background_path', trimap='trimap_path')


@DATASETS.register_module()
class MattingDirDataset(DenseDirDataset):
    """``data_root/rgb/<name>`` images with ``alpha/<name>`` mattes (8- or 16-bit greyscale), read and checked by
    ``LoadMattingAnnotations``.

    Each folder of ``optional_folders`` that exists under ``data_root`` is used, and must then have a file for every
    image: ``foreground/`` (RGB colour of the person), ``background/`` (the background the image was composited
    over; enables the composition loss), ``trimap/`` (8-bit, 0 background, 255 foreground, anything else unknown;
    used instead of a derived trimap).

    Args:
        foreground_premultiplied: The foreground files hold alpha x colour (as SynthHumans writes them) instead of
            the plain colour most matting datasets ship.
        optional_folders: Which of ``foreground``, ``background``, ``trimap`` to use when present.
        **kwargs: :class:`DenseDirDataset` arguments (``data_root``, ``pipeline``...).
    """

    COMPANIONS = dict(alpha_path=('alpha', MAP_SUFFIXES))

    def __init__(self, foreground_premultiplied: bool = False,
                 optional_folders: Sequence[str] = tuple(OPTIONAL_FOLDERS), **kwargs) -> None:
        unknown = set(optional_folders) - set(OPTIONAL_FOLDERS)
        if unknown:
            raise ValueError(f'MattingDirDataset: unknown optional folders {sorted(unknown)}; choose from '
                             f'{tuple(OPTIONAL_FOLDERS)}')
        self.foreground_premultiplied = foreground_premultiplied
        self.optional_folders = tuple(optional_folders)
        super().__init__(**kwargs)

    def load_data_list(self) -> List[dict]:
        data_list = super().load_data_list()
        names = [info['sample_name'] for info in data_list]
        for sub in self.optional_folders:
            folder = osp.join(self.data_root, sub)
            if not osp.isdir(folder):
                continue
            files = index_folder(folder, MAP_SUFFIXES)
            missing = [name for name in names if name not in files]
            if missing:
                raise FileNotFoundError(
                    f'MattingDirDataset: {folder!r} exists but {len(missing)} of {len(names)} images have no file '
                    f'there (e.g. {missing[:3]}); add them, or leave {sub!r} out of optional_folders')
            for info in data_list:
                info[OPTIONAL_FOLDERS[sub]] = files[info['sample_name']]
        for info in data_list:
            info['foreground_premultiplied'] = self.foreground_premultiplied
        return data_list
