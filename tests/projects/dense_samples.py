"""Data samples for the dense projects' tests: metric inputs, and SynthHumans validation samples."""
from typing import Type

import torch
from mmengine.structures import PixelData

from sapiens2.structures import DenseDataSample


def metric_sample(pred: torch.Tensor, gt: torch.Tensor) -> dict:
    """A sample as a metric's ``process`` gets it: ground truth ``gt`` (C, H, W), every pixel valid, and ``pred``."""
    sample = DenseDataSample()
    sample.gt_dense = PixelData(data=gt, mask=torch.ones(1, *gt.shape[1:], dtype=torch.bool))
    sample.pred_dense = PixelData(data=pred)
    return sample.to_dict()


def synthhumans_val(dataset_type: Type, root: str, annotations: str, map_key: str, *steps: dict):
    """``dataset_type`` over SynthHumans' val split: the image and the ``annotations`` transform's maps loaded,
    letterboxed to 128x96 (``gt_mask`` and ``map_key`` nearest), then ``steps``."""
    letterbox = dict(type='Letterbox', size=(128, 96), map_interpolations={'gt_mask': 'nearest', map_key: 'nearest'})
    return dataset_type(data_root=f'{root}/val', pipeline=[dict(type='LoadImageFromFile'), dict(type=annotations),
                                                            letterbox, *steps])
