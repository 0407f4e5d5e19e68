"""Data sample of the dense regression tasks (normal, pointmap, albedo)."""
from mmengine.structures import BaseDataElement, PixelData


class DenseDataSample(BaseDataElement):
    """A sample with a dense target and prediction.

    * ``gt_dense``: ``PixelData`` with ``data`` (C, H, W) float target and ``mask`` (1, H, W) bool validity.
    * ``pred_dense``: ``PixelData`` with ``data`` (C, H, W), at the original image size.
    Task extras (``gt_scale``, ``cam_K``, ``pred_scale``...) are plain data fields.
    """

    @property
    def gt_dense(self) -> PixelData:
        return self._gt_dense

    @gt_dense.setter
    def gt_dense(self, value: PixelData) -> None:
        self.set_field(value, '_gt_dense', dtype=PixelData)

    @gt_dense.deleter
    def gt_dense(self) -> None:
        del self._gt_dense

    @property
    def pred_dense(self) -> PixelData:
        return self._pred_dense

    @pred_dense.setter
    def pred_dense(self, value: PixelData) -> None:
        self.set_field(value, '_pred_dense', dtype=PixelData)

    @pred_dense.deleter
    def pred_dense(self) -> None:
        del self._pred_dense
