"""inference_pipeline: the config's test pipeline without its ground-truth transforms, fed with arrays."""
from pathlib import Path

import numpy as np
import pytest
from mmcv.transforms import BaseTransform
from mmengine.config import Config

from sapiens2.apis.pipeline import inference_pipeline, is_ground_truth_transform
from sapiens2.engine.launch import load_config
from sapiens2.structures.letterbox import letterbox_geometry

REPO = Path(__file__).resolve().parents[2]
SEG = str(REPO / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')
POSE = str(REPO / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py')


def dense_config(task: str) -> str:
    return str(REPO / 'projects' / task / 'configs' / f'sapiens2_nano_{task}_synthhumans-128x96.py')


def names(pipeline) -> list:
    return [type(t).__name__ for t in pipeline.transforms]


def test_seg_drops_load_annotations_and_reads_arrays():
    pipeline = inference_pipeline(load_config(SEG))
    assert names(pipeline) == ['LoadImageFromArray', 'Resize', 'PackSegInputs']
    packed = pipeline(dict(img=np.zeros((90, 200, 3), np.uint8)))
    assert tuple(packed['inputs'].shape) == (3, 128, 96)
    assert packed['data_samples'].ori_shape == (90, 200) and 'gt_sem_seg' not in packed['data_samples']


@pytest.mark.parametrize('task,kept', [
    ('normal', ['LoadImageFromArray', 'Letterbox', 'PackDenseInputs']),
    ('pointmap', ['LoadImageFromArray', 'Letterbox', 'PackDenseInputs']),  # also drops PointmapGenerateTarget
    ('albedo', ['LoadImageFromArray', 'Letterbox', 'PackDenseInputs']),
])
def test_dense_projects_drop_their_ground_truth_transforms(task, kept):
    cfg = load_config(dense_config(task))
    assert len(cfg.test_dataloader.dataset.pipeline) > len(kept)
    pipeline = inference_pipeline(cfg)
    assert names(pipeline) == kept
    sample = pipeline(dict(img=np.zeros((90, 200, 3), np.uint8)))['data_samples']
    assert sample.letterbox_pad == letterbox_geometry((90, 200), (128, 96))[1] and 'gt_dense' not in sample


def test_pose_keeps_its_array_aware_loader():
    pipeline = inference_pipeline(load_config(POSE))
    assert names(pipeline) == ['LoadImage', 'GetBBoxCenterScale', 'Sapiens2TopdownAffine', 'PackPoseInputs']


def test_ground_truth_rule_and_missing_pipeline():
    from mmseg.datasets.transforms import LoadAnnotations

    class Target(BaseTransform):
        ground_truth_only = True

        def transform(self, results):
            return results

    class Photometric(Target):
        ground_truth_only = False

    assert is_ground_truth_transform(LoadAnnotations) and is_ground_truth_transform(Target())
    assert not is_ground_truth_transform(Photometric)
    with pytest.raises(KeyError, match='test_dataloader.dataset.pipeline'):
        inference_pipeline(Config(dict(model=dict())))
