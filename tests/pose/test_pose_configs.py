"""The four 1024x768 pose configs follow the official recipe and build the official head layouts."""
import json
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmpose.registry import MODELS

from tests import official_data

ROOT = Path(__file__).resolve().parents[2]
RECIPE = {  # size: (lr, layer decay, clip, iters, batch/GPU) of the official recipe
    '0.4b': (5e-4, 0.8, 2.0, 10000, 6),
    '0.8b': (5e-4, 0.85, 4.0, 10000, 12),
    '1b': (5e-4, 0.9, 4.0, 20000, 7),
    '5b': (1e-4, 0.94, 4.0, 20000, 2),
}


def load(size: str) -> Config:
    return Config.fromfile(str(ROOT / 'configs' / 'pose' / f'sapiens2_{size}_pose_goliath-1024x768.py'))


@pytest.mark.parametrize('size', sorted(RECIPE))
def test_recipe(size):
    cfg = load(size)
    lr, decay, clip, iters, batch = RECIPE[size]
    ow = cfg.optim_wrapper
    assert ow.type == 'AmpOptimWrapper' and ow.dtype == 'bfloat16'
    assert ow.constructor == 'Sapiens2LayerDecayOptimWrapperConstructor'
    assert (ow.optimizer.type, ow.optimizer.lr, ow.optimizer.weight_decay) == ('AdamW', lr, 0.1)
    assert ow.paramwise_cfg.layer_decay_rate == decay and ow.clip_grad.max_norm == clip
    assert cfg.train_cfg.max_iters == iters and cfg.train_cfg.val_interval == 1000
    warmup, decay_sched = cfg.param_scheduler
    assert (warmup.type, warmup.start_factor, warmup.end) == ('LinearLR', 1e-3, 500)
    assert (decay_sched.type, decay_sched.power, decay_sched.begin, decay_sched.end) == ('PolyLR', 1.0, 500, iters)
    assert cfg.train_dataloader.batch_size == batch and cfg.val_dataloader.batch_size == 4
    assert cfg.model.backbone.arch == f'sapiens2_{size}' and cfg.model.backbone.img_size == (1024, 768)
    assert size in cfg.model.backbone.init_cfg.checkpoint
    assert dict(cfg.model.test_cfg) == dict(flip_test=True, flip_mode='heatmap', shift_heatmap=False)
    codec = cfg.model.head.decoder
    expected = ('FastUDPHeatmap', (768, 1024), (192, 256), 6)  # mmpose's UDPHeatmap with a batched decode
    assert (codec.type, codec.input_size, codec.heatmap_size, codec.sigma) == expected
    assert cfg.model.head.loss.loss_weight == 10.0 and cfg.default_scope == 'mmpose'


@pytest.mark.parametrize('size', sorted(RECIPE))
def test_head_matches_official_layout(size):
    path = official_data('state_dicts', 'tasks',
                         f'sapiens2_{size}_keypoints308_shutterstock_goliath_3po-1024x768.head.json')
    with torch.device('meta'):
        head = MODELS.build(load(size).model.head)
    assert {f'decode_head.{k}': list(v.shape) for k, v in head.state_dict().items()} == json.loads(path.read_text())


def test_pipelines_and_metrics():
    cfg = load('0.4b')
    train = [t.type for t in cfg.train_dataloader.dataset.pipeline]
    assert train == [
        'LoadImage', 'GetBBoxCenterScale', 'RandomFlip', 'RandomHalfBody', 'RandomBBoxTransform',
        'Sapiens2TopdownAffine', 'RandomApply', 'RandomBlur', 'RandomBlur', 'CoarseDropout', 'GenerateTarget',
        'PackPoseInputs'
    ]
    assert [t.type for t in cfg.val_dataloader.dataset.pipeline] == [
        'LoadImage', 'GetBBoxCenterScale', 'Sapiens2TopdownAffine', 'PackPoseInputs']
    coco, parts, pck = cfg.val_evaluator
    assert (coco.type, coco.iou_type, coco.score_mode, coco.keypoint_score_thr, coco.nms_thr) == (
        'CocoMetric', 'keypoints', 'bbox_keypoint', 0.2, 0.9)
    assert parts.type == 'KeypointPartitionMetric' and sorted(parts.partitions) == sorted(
        ['body', 'foot', 'face', 'left_hand', 'right_hand'])
    assert (pck.type, pck.thr) == ('PCKAccuracy', 0.05)
