"""Image loading that signals an unreadable file instead of raising, so the dataset can skip it."""
import mmcv
from mmcv.transforms import LoadImageFromFile
from mmengine import fileio

from sapiens2.registry import TRANSFORMS


@TRANSFORMS.register_module()
class LoadImageOrSkip(LoadImageFromFile):
    """``LoadImageFromFile`` that returns None for a missing or undecodable file (mmcv's version asserts on
    undecodable bytes). MMEngine datasets then fetch another sample; ``ImageFolderDataset`` counts and logs it."""

    def transform(self, results: dict) -> dict | None:
        try:
            img_bytes = fileio.get(results['img_path'], backend_args=self.backend_args)
            img = mmcv.imfrombytes(img_bytes, flag=self.color_type, backend=self.imdecode_backend)
        except (OSError, ValueError):
            return None
        if img is None:
            return None
        if self.to_float32:
            img = img.astype('float32')
        results.update(img=img, img_shape=img.shape[:2], ori_shape=img.shape[:2])
        return results
