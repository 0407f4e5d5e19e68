"""Normal, pointmap and albedo configs build heads whose state dicts match the official layouts exactly."""
import json

import pytest
import torch
from mmengine.config import Config

from sapiens2.registry import MODELS
from tests import official_data

SIZES = ('0.4b', '0.8b', '1b', '5b')
TASKS = dict(normal='normal_metasim_render_people', pointmap='pointmap_render_people', albedo='albedo_render_people')


def _config(task: str, size: str) -> Config:
    return Config.fromfile(f'projects/{task}/configs/sapiens2_{size}_{task}_render_people-1024x768.py')


def _reference(name: str) -> dict:
    return json.loads(official_data('state_dicts', 'tasks', name).read_text())


def _summary(task: str, size: str) -> dict:
    summary = json.loads(official_data('state_dicts', 'tasks', 'tasks_summary.json').read_text())
    return summary[f'sapiens2_{size}_{TASKS[task]}-1024x768']


@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('task', sorted(TASKS))
def test_head_keys_shapes_and_strict_load(task, size):
    expected = _reference(f'sapiens2_{size}_{TASKS[task]}-1024x768.head.json')
    with torch.device('meta'):
        head = MODELS.build(_config(task, size).model.decode_head)
    actual = {f'decode_head.{k}': list(v.shape) for k, v in head.state_dict().items()}
    assert list(actual) == list(expected)
    assert actual == expected
    assert sum(p.numel() for p in head.parameters()) == _summary(task, size)['head_params']
    state = {k.removeprefix('decode_head.'): torch.empty(v, device='meta') for k, v in expected.items()}
    head.load_state_dict(state, strict=True, assign=True)


@pytest.mark.parametrize('task', sorted(TASKS))
def test_full_estimator_layout_0_4b(task):
    expected = _reference(f'sapiens2_0.4b_{TASKS[task]}-1024x768.full.json')
    cfg = _config(task, '0.4b').model
    cfg.backbone.init_cfg = None
    with torch.device('meta'):
        model = MODELS.build(cfg)
    actual = {k: list(v.shape) for k, v in model.state_dict().items()}
    assert actual == expected


@pytest.mark.parametrize('task', sorted(TASKS))
def test_recipe_matches_the_official_numbers(task):
    for size in SIZES:
        cfg, recipe = _config(task, size), _summary(task, size)['recipe']
        assert cfg.train_cfg.max_iters == recipe['num_iters'], size
        assert cfg.train_cfg.val_interval == recipe['val_interval'], size
        assert cfg.optim_wrapper.optimizer.lr == recipe['lr'], size
        assert cfg.optim_wrapper.optimizer.weight_decay == recipe['weight_decay'], size
        assert cfg.optim_wrapper.paramwise_cfg.layer_decay_rate == recipe['layer_decay_rate'], size
        assert cfg.optim_wrapper.clip_grad.max_norm == recipe['clip_grad_max_norm'], size
        assert (cfg.optim_wrapper.type == 'AmpOptimWrapper') == (recipe['mixed_precision'] == 'bf16'), size
        assert cfg.param_scheduler[1].end == recipe['num_iters'], size
        weights = [loss['loss_weight'] for loss in cfg.model.decode_head.loss_decode]
        assert weights == [loss['loss_weight'] for loss in _summary(task, size)['loss_decode']], size
