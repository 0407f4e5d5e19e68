"""Sapiens2SegTTAModel: a mirrored view's left/right logits are swapped back before mmseg averages the views."""
import torch
from mmengine.structures import PixelData
from mmseg.structures import SegDataSample

from sapiens2.models.estimators import Sapiens2SegTTAModel


class _Segmentor(torch.nn.Module):
    out_channels = 4

    def test_step(self, data):
        return data


def view(logits, flip):
    sample = SegDataSample(metainfo=dict(img_path='a.png', flip=flip, flip_direction='horizontal' if flip else None))
    sample.seg_logits = PixelData(data=logits)
    sample.gt_sem_seg = PixelData(data=torch.zeros(1, *logits.shape[1:], dtype=torch.long))
    return sample


def test_flipped_views_have_their_left_right_classes_swapped():
    model = Sapiens2SegTTAModel(module=_Segmentor(), swap_seg_labels=[[1, 2]])
    logits = torch.zeros(4, 2, 3)
    logits[1] = 10.0  # the mirrored view sees a "left" part ...
    merged = model.merge_preds([[view(logits, flip=True)]])[0]
    assert (merged.pred_sem_seg.data == 2).all()  # ... which is the person's right part
    plain = model.merge_preds([[view(logits.clone(), flip=False)]])[0]
    assert (plain.pred_sem_seg.data == 1).all()


def test_views_are_averaged_after_the_swap():
    model = Sapiens2SegTTAModel(module=_Segmentor(), swap_seg_labels=[[1, 2]])
    original, mirrored = torch.zeros(4, 1, 1), torch.zeros(4, 1, 1)
    original[2], original[3] = 2.0, 2.1  # alone, class 3 would win
    mirrored[1] = 5.0  # the mirror says 1, i.e. 2 once swapped
    merged = model.merge_preds([[view(original, False), view(mirrored, True)]])[0]
    assert merged.pred_sem_seg.data.item() == 2
