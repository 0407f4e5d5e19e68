"""The COCO-17, COCO-WholeBody and own-layout pose configs keep the official per-size recipe and head, read mmpose's
datasets and metainfo, and follow ViTPose's COCO schedule."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmpose.datasets.datasets.utils import parse_pose_metainfo
from mmpose.registry import MODELS

ROOT = Path(__file__).resolve().parents[2]
SIZES = ('0.4b', '1b')
PUBLIC = {'coco': ('CocoDataset', 'coco.py', 17, 'CocoMetric'),
          'coco-wholebody': ('CocoWholeBodyDataset', 'coco_wholebody.py', 133, 'CocoWholeBodyMetric')}


def load(size: str, data: str) -> Config:
    return Config.fromfile(str(ROOT / 'configs' / 'pose' / f'sapiens2_{size}_pose_{data}-1024x768.py'))


def recipe(cfg: Config) -> tuple:
    """What a public-data config must keep from the official config of its size."""
    head = {k: v for k, v in cfg.model.head.items() if k != 'out_channels'}
    return (cfg.model.backbone.to_dict(), head, cfg.optim_wrapper.to_dict(), cfg.model.test_cfg.to_dict(),
            cfg.get('runner_type'), cfg.get('strategy'))


@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('data', [*PUBLIC, 'custom'])
def test_keeps_the_official_recipe_of_its_size(size, data):
    assert recipe(load(size, data)) == recipe(load(size, 'goliath'))


@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('data', PUBLIC)
def test_dataset_metric_and_vitpose_schedule(size, data):
    cfg = load(size, data)
    dataset_type, metainfo, num_keypoints, metric = PUBLIC[data]
    assert cfg.model.head.out_channels == num_keypoints
    for loader in (cfg.train_dataloader, cfg.val_dataloader, cfg.test_dataloader):
        assert loader.dataset.type == dataset_type and loader.dataset.data_root == 'data/coco/'
        assert 'metainfo' not in loader.dataset  # the dataset's own: mmpose's configs/_base_/datasets/<metainfo>
    assert cfg.val_dataloader.dataset.bbox_file.endswith('COCO_val2017_detections_AP_H_56_person.json')
    assert cfg.val_evaluator.type == metric and cfg.val_evaluator.ann_file.startswith('data/coco/annotations/')
    assert cfg.train_cfg.to_dict() == dict(type='EpochBasedTrainLoop', max_epochs=210, val_interval=10)
    warmup, steps = cfg.param_scheduler
    assert (warmup.end, warmup.by_epoch, steps.type, steps.milestones, steps.by_epoch) == (
        500, False, 'MultiStepLR', [170, 200], True)
    assert cfg.train_dataloader.batch_size * 8 == cfg.auto_scale_lr.base_batch_size == 512
    assert cfg.train_dataloader.sampler.type == 'DefaultSampler' and cfg.log_processor.by_epoch
    checkpoint = cfg.default_hooks.checkpoint
    assert checkpoint.by_epoch and checkpoint.save_best == f'{data}/AP'  # the metric's prefix


@pytest.mark.parametrize('data', PUBLIC)
def test_mmpose_metainfo_matches_the_head(data):
    import mmpose.datasets  # noqa: F401  (registers the datasets)
    from mmpose.registry import DATASETS
    dataset_type, _, num_keypoints, _ = PUBLIC[data]
    meta = parse_pose_metainfo(DATASETS.get(dataset_type).METAINFO)
    assert meta['num_keypoints'] == num_keypoints == len(meta['flip_indices']) == len(meta['sigmas'])
    with torch.device('meta'):
        head = MODELS.build(load('0.4b', data).model.head)
    assert head.conv_pose.out_channels == num_keypoints
