"""The LIP and own-classes seg configs keep the official per-size recipe and head; LIP reads mmseg's LIPDataset with
its 20 classes, swaps its left/right pairs and trains as many images as mmseg's LIP schedule."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmseg.registry import DATASETS, MODELS

import sapiens2  # noqa: F401  (registers the sapiens2 modules)

ROOT = Path(__file__).resolve().parents[2]
SIZES = {'0.4b': (27000, 12), '1b': (40000, 8)}  # iterations, batch per GPU
MMSEG_LIP_IMAGES = 160000 * 16  # mmseg's LIP schedule: 160k iterations at 4 GPUs x 4


def load(size: str, data: str) -> Config:
    return Config.fromfile(str(ROOT / 'configs' / 'seg' / f'sapiens2_{size}_seg_{data}-1024x768.py'))


def recipe(cfg: Config) -> tuple:
    head = {k: v for k, v in cfg.model.decode_head.items() if k not in ('num_classes', 'loss_decode')}
    return (cfg.model.backbone.to_dict(), head, cfg.optim_wrapper.to_dict(), cfg.model.data_preprocessor.to_dict(),
            cfg.get('runner_type'), cfg.train_dataloader.batch_size)


@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('data', ['lip', 'custom'])
def test_keeps_the_official_recipe_of_its_size(size, data):
    assert recipe(load(size, data)) == recipe(load(size, 'bodypart29'))


@pytest.mark.parametrize('size', SIZES)
def test_lip_dataset_pairs_and_schedule(size):
    cfg = load(size, 'lip')
    iters, batch = SIZES[size]
    lip = DATASETS.get('LIPDataset').METAINFO['classes']
    assert cfg.model.decode_head.num_classes == len(lip) == 20
    assert all(loss.get('class_weight') is None for loss in cfg.model.decode_head.loss_decode)
    pairs = [[14, 15], [16, 17], [18, 19]]
    assert all(lip[a].replace('Left', 'Right') == lip[b] for a, b in pairs)
    flips = [t for t in cfg.train_dataloader.dataset.pipeline if t.type == 'RandomFlip']
    assert [f.swap_seg_labels for f in flips] == [pairs] and cfg.tta_model.swap_seg_labels == pairs
    assert [t.type for t in cfg.train_dataloader.dataset.pipeline] == [
        t.type for t in load(size, 'bodypart29').train_dataloader.dataset.pipeline]
    for loader in (cfg.train_dataloader, cfg.val_dataloader, cfg.test_dataloader):
        assert loader.dataset.type == 'LIPDataset' and loader.dataset.data_root == 'data/LIP'
    assert cfg.val_dataloader.dataset.data_prefix.seg_map_path == 'val_segmentations'
    assert (cfg.train_cfg.max_iters, cfg.train_dataloader.batch_size) == (iters, batch)
    assert cfg.param_scheduler[-1].end == iters
    assert abs(iters * batch * 8 / MMSEG_LIP_IMAGES - 1) < 0.02


def test_lip_head_builds_with_20_classes():
    with torch.device('meta'):
        head = MODELS.build(load('0.4b', 'lip').model.decode_head)
    assert head.conv_seg.out_channels == 20
