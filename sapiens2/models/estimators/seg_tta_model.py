"""Flip test-time augmentation for body-part segmentation: mmseg's ``SegTTAModel`` with left/right classes swapped."""
from typing import List, Sequence

from mmseg.models.segmentors import SegTTAModel
from mmseg.registry import MODELS


@MODELS.register_module()
class Sapiens2SegTTAModel(SegTTAModel):
    """mmseg's ``SegTTAModel`` (mean of the softmaxed logits of the augmented views, ``tools/test.py --tta``) that
    also swaps the logits of left/right class pairs in the horizontally flipped views.

    mmseg flips a flipped view's logits back in space, but a mirrored person's left arm is predicted as a right
    arm; without the swap the two would be averaged.

    Args:
        module: The segmentor (set by ``tools/test.py --tta`` from ``model``).
        swap_seg_labels: Left/right class pairs (the ``RandomFlip`` ``swap_seg_labels`` of training).
        **kwargs: ``BaseTTAModel`` arguments.
    """

    def __init__(self, module: dict, swap_seg_labels: Sequence[Sequence[int]] = (), **kwargs) -> None:
        super().__init__(module=module, **kwargs)
        self.swap_seg_labels = [tuple(pair) for pair in swap_seg_labels]

    def merge_preds(self, data_samples_list: List[list]) -> list:
        for data_samples in data_samples_list:
            for sample in data_samples:
                if sample.metainfo.get('flip') and sample.metainfo.get('flip_direction') == 'horizontal':
                    logits = sample.seg_logits.data
                    order = list(range(logits.shape[0]))
                    for a, b in self.swap_seg_labels:
                        order[a], order[b] = b, a
                    sample.seg_logits.data = logits[order]
        return super().merge_preds(data_samples_list)
