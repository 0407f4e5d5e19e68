"""Reject label maps holding ids that are neither a class nor the ignore index, and name those that supervise no pixel
(run right after LoadAnnotations)."""
import warnings

import numpy as np
from mmcv.transforms import BaseTransform
from mmseg.registry import TRANSFORMS


class NoSupervisedPixelWarning(UserWarning):
    """A label map whose every pixel is the ignore index: the sample adds nothing to the loss."""


@TRANSFORMS.register_module()
class CheckSegLabels(BaseTransform):
    """Raise ``ValueError`` naming the label-map file and the offending ids when ``gt_seg_map`` holds an id outside
    ``0 .. num_classes - 1`` that is not ``ignore_index``; warn (:class:`NoSupervisedPixelWarning`) naming the file
    when every pixel is ``ignore_index`` (``SupervisedPixelsHook`` stops a training where a whole epoch is so).

    Placed after ``LoadAnnotations``, so it sees the ids after any source remap (``label_map``) and
    ``reduce_zero_label``. :class:`BodyPart29Dataset` inserts it there by itself (``check_labels=True``).

    Args:
        num_classes: Number of classes (29 for the body-part taxonomy).
        ignore_index: The id excluded from the loss and the metrics.
    """

    def __init__(self, num_classes: int = 29, ignore_index: int = 255) -> None:
        self.num_classes = num_classes
        self.ignore_index = ignore_index

    def transform(self, results: dict) -> dict:
        """Check ``results['gt_seg_map']``; return ``results`` unchanged."""
        labels = results['gt_seg_map']
        if labels.size and not (labels != self.ignore_index).any():
            warnings.warn(NoSupervisedPixelWarning(
                f"{results.get('seg_map_path', '<label map>')}: every pixel is {self.ignore_index} (ignored), so this "
                'sample supervises nothing (loss 0, accuracy 100 %); label it, fix its source_mapping, or remove it '
                'from the dataset.'), stacklevel=2)
        if labels.size == 0 or (labels.min() >= 0 and labels.max() < self.num_classes):
            return results
        if labels.dtype == np.uint8:
            ids = np.flatnonzero(np.bincount(labels.ravel(), minlength=256))
        else:
            ids = np.unique(labels)
        bad = [int(i) for i in ids if not (0 <= i < self.num_classes or i == self.ignore_index)]
        if bad:
            remap = ' after the source remap' if results.get('label_map') else ''
            counts = {i: int((labels == i).sum()) for i in bad[:10]}
            raise ValueError(
                f"{results.get('seg_map_path', '<label map>')}: label ids {bad[:10]}{' ...' if len(bad) > 10 else ''} "
                f'(pixels: {counts}){remap} are neither classes 0..{self.num_classes - 1} nor {self.ignore_index} '
                '(ignore). Fix the label map, or remap its taxonomy (BodyPart29Dataset source_mapping, e.g. '
                "'DOME_MAPPING_34_to_29', or a label_map) so every id is a class or 255.")
        return results

    def __repr__(self) -> str:
        return f'{type(self).__name__}(num_classes={self.num_classes}, ignore_index={self.ignore_index})'
