"""Data samples for the dense projects' metric tests."""
import torch
from mmengine.structures import PixelData

from sapiens2.structures import DenseDataSample


def metric_sample(pred: torch.Tensor, gt: torch.Tensor) -> dict:
    """A sample as a metric's ``process`` gets it: ground truth ``gt`` (C, H, W), every pixel valid, and ``pred``."""
    sample = DenseDataSample()
    sample.gt_dense = PixelData(data=gt, mask=torch.ones(1, *gt.shape[1:], dtype=torch.bool))
    sample.pred_dense = PixelData(data=pred)
    return sample.to_dict()
