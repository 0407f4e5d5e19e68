"""Pack a dense-regression sample into ``inputs`` + :class:`DenseDataSample`."""
from typing import Optional, Sequence

import numpy as np
import torch
from mmcv.transforms import BaseTransform
from mmengine.structures import PixelData

from sapiens2.registry import TRANSFORMS
from sapiens2.structures import DenseDataSample

DEFAULT_META_KEYS = ('img_path', 'ori_shape', 'img_shape', 'letterbox_pad', 'letterbox_scale', 'flip')


def _to_chw(array: np.ndarray) -> torch.Tensor:
    array = array[..., None] if array.ndim == 2 else array
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


@TRANSFORMS.register_module()
class PackDenseInputs(BaseTransform):
    """Pack ``img`` (H, W, 3 BGR uint8) as a (3, H, W) tensor and the target as ``gt_dense``.

    Ground truth is packed when the pipeline loaded it (``gt_mask`` present); then the target and every extra key
    must be there. Without ``gt_mask`` (inference, whose pipeline drops the annotation transforms) only the image
    and the meta keys are packed.

    Args:
        target_key: Results key of the (H, W[, C]) target, e.g. ``'gt_normal'``; ``gt_mask`` is its validity.
            ``None`` packs no target.
        extra_keys: Other ground-truth results keys stored as tensor data fields (e.g. ``'gt_scale'``, ``'cam_K'``).
        meta_keys: Results keys stored as metainfo when present.
    """

    def __init__(self,
                 target_key: Optional[str],
                 extra_keys: Sequence[str] = (),
                 meta_keys: Sequence[str] = DEFAULT_META_KEYS) -> None:
        self.target_key = target_key
        self.extra_keys = tuple(extra_keys)
        self.meta_keys = tuple(meta_keys)

    def transform(self, results: dict) -> dict:
        sample = DenseDataSample()
        if 'gt_mask' in results:
            self._pack_ground_truth(results, sample)
        sample.set_metainfo({key: results[key] for key in self.meta_keys if key in results})
        return dict(inputs=_to_chw(results['img']), data_samples=sample)

    def _pack_ground_truth(self, results: dict, sample: DenseDataSample) -> None:
        keys = ((self.target_key, ) if self.target_key is not None else ()) + self.extra_keys
        for key in keys:
            if key not in results:
                raise KeyError(f'PackDenseInputs needs results[{key!r}]; add the loading/target transform that '
                               f'provides it before packing (available keys: {sorted(results)}).')
        if self.target_key is not None:
            target = _to_chw(np.asarray(results[self.target_key], dtype=np.float32))
            mask = _to_chw(np.asarray(results['gt_mask'], dtype=bool))
            sample.gt_dense = PixelData(data=target, mask=mask)
        for key in self.extra_keys:
            sample.set_field(torch.as_tensor(np.asarray(results[key], dtype=np.float32)), key)

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(target_key={self.target_key!r}, extra_keys={self.extra_keys})'
