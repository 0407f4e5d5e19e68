"""mmseg's IoUMetric on hand-made cases: aAcc, mIoU (nanmean over present classes), mAcc."""
import pytest
import torch
from mmseg.evaluation import IoUMetric

from sapiens2.datasets.seg import seg29_metainfo


def evaluate(pred, gt):
    metric = IoUMetric(iou_metrics=['mIoU'])
    metric.dataset_meta = seg29_metainfo()
    samples = [dict(pred_sem_seg=dict(data=torch.tensor([pred])), gt_sem_seg=dict(data=torch.tensor([gt])))]
    metric.process({}, samples)
    return metric.compute_metrics(metric.results)


def test_absent_classes_are_skipped_and_ignore_is_excluded():
    result = evaluate(pred=[[0, 1, 1, 1, 6]], gt=[[0, 0, 1, 1, 255]])
    # IoU: background 1/2, Apparel 2/3; the other 27 classes never occur (NaN, skipped). Ignored pixel excluded.
    assert result['aAcc'] == pytest.approx(75.0)
    assert result['mIoU'] == pytest.approx(round((0.5 + 2 / 3) / 2 * 100, 2))
    assert result['mAcc'] == pytest.approx(75.0)


def test_class_only_in_prediction_counts_as_zero():
    result = evaluate(pred=[[0, 0, 3, 1]], gt=[[0, 0, 1, 1]])
    # background IoU 1, Apparel 1/2, Face_Neck (predicted, never true) 0.
    assert result['mIoU'] == pytest.approx(round((1 + 0.5 + 0) / 3 * 100, 2))
