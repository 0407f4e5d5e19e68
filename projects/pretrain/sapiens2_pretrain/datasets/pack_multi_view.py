"""Packs the multi-crop views into the ``inputs`` / ``data_samples`` pair MMEngine models take."""
from mmcv.transforms import BaseTransform
from mmengine.structures import BaseDataElement

from sapiens2.registry import TRANSFORMS


@TRANSFORMS.register_module()
class PackMultiViewInputs(BaseTransform):
    """``inputs = dict(global_views=(V, 3, H, W), local_views=(N, 3, h, w))`` uint8 tensors; the data sample
    carries ``meta_keys`` as metainfo."""

    def __init__(self, meta_keys: tuple[str, ...] = ('img_path', 'ori_shape')) -> None:
        self.meta_keys = meta_keys

    def transform(self, results: dict) -> dict:
        for key in ('global_views', 'local_views'):
            if key not in results:
                raise KeyError(f'PackMultiViewInputs needs "{key}"; put MultiViewCrop before it in the pipeline')
        inputs = dict(global_views=results['global_views'], local_views=results['local_views'])
        metainfo = {k: results[k] for k in self.meta_keys if k in results}
        return dict(inputs=inputs, data_samples=BaseDataElement(metainfo=metainfo))
