"""Unlabeled image-folder dataset: every readable image under a folder, recursively."""
import os
import os.path as osp

from mmengine.dataset import BaseDataset
from mmengine.logging import MMLogger
from PIL import Image

from sapiens2.registry import DATASETS

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.bmp', '.webp', '.tif', '.tiff')


def find_images(root: str, extensions: tuple[str, ...] = IMAGE_EXTENSIONS) -> list[str]:
    """Sorted paths of the files under ``root`` (recursive, links followed) whose suffix is in ``extensions``."""
    paths = []
    for folder, _, files in os.walk(root, followlinks=True):
        paths += [osp.join(folder, f) for f in files if osp.splitext(f)[1].lower() in extensions]
    return sorted(paths)


def is_readable_image(path: str) -> bool:
    """Whether PIL can identify and verify ``path`` as an image (cheap: no full decode)."""
    try:
        with Image.open(path) as img:
            img.verify()
        return True
    except (OSError, SyntaxError, ValueError):
        return False


@DATASETS.register_module()
class ImageFolderDataset(BaseDataset):
    """Images under ``data_root`` (recursive) with the given extensions, without labels.

    With ``verify=True`` every file is checked when the list is built; unreadable files are skipped, counted and
    reported in the log. Files that fail later in the pipeline (the pipeline returns None) are reported too, and
    MMEngine re-fetches another index in their place.
    """

    def __init__(self,
                 data_root: str,
                 extensions: tuple[str, ...] = IMAGE_EXTENSIONS,
                 verify: bool = True,
                 **kwargs) -> None:
        self.extensions = tuple(e.lower() for e in extensions)
        self.verify = verify
        self.num_skipped = 0
        super().__init__(data_root=data_root, **kwargs)

    def load_data_list(self) -> list[dict]:
        root = self.data_root
        if not osp.isdir(root):
            raise FileNotFoundError(f'ImageFolderDataset: data_root "{root}" is not a folder; set '
                                    'train_dataloader.dataset.data_root to a folder of images.')
        paths = find_images(root, self.extensions)
        logger = MMLogger.get_current_instance()
        if self.verify:
            bad = [p for p in paths if not is_readable_image(p)]
            paths = sorted(set(paths) - set(bad))
            self.num_skipped = len(bad)
            if bad:
                shown = ', '.join(bad[:10]) + (' ...' if len(bad) > 10 else '')
                logger.warning(f'ImageFolderDataset: skipped {len(bad)} unreadable file(s) under {root}: {shown}')
        if not paths:
            raise ValueError(f'ImageFolderDataset: no readable image with a suffix in {self.extensions} under '
                             f'"{root}".')
        logger.info(f'ImageFolderDataset: {len(paths)} images under {root}, skipped {self.num_skipped} unreadable')
        return [dict(img_path=p) for p in paths]

    def prepare_data(self, idx: int):
        data = super().prepare_data(idx)
        if data is None:
            self.num_skipped += 1
            MMLogger.get_current_instance().warning(
                f'ImageFolderDataset: could not load {self.get_data_info(idx)["img_path"]}; skipped '
                f'({self.num_skipped} skipped in this process so far)')
        return data
