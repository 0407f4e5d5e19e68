"""Seg configs: official recipe per size and a strict official key layout (models built on the meta device)."""
import json
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmseg.registry import MODELS

import sapiens2  # noqa: F401  (registers everything)
from tests import official_data

OFFICIAL = 'sapiens2_{}_seg_shutterstock_goliath-1024x768'
CONFIG = str(Path(__file__).resolve().parents[2] / 'configs/seg/sapiens2_{}_seg_bodypart29-1024x768.py')
# size: (embed dims, iterations, layer decay, clip norm, batch per GPU, bf16)
RECIPE = {
    '0.4b': (1024, 20000, 0.8, 2.0, 12, True),
    '0.8b': (1280, 30000, 0.85, 4.0, 5, False),
    '1b': (1536, 20000, 0.9, 4.0, 8, True),
    '5b': (2432, 50000, 0.94, 4.0, 2, True),
}


def build_on_meta(cfg):
    init_default_scope(cfg.default_scope)
    with torch.device('meta'):
        return MODELS.build(cfg.model)


def layout(model):
    return {k: list(v.shape) for k, v in model.state_dict().items()}


@pytest.mark.parametrize('size', sorted(RECIPE))
def test_recipe(size):
    embed, iters, decay, clip, batch, bf16 = RECIPE[size]
    cfg = Config.fromfile(CONFIG.format(size))
    assert cfg.default_scope == 'mmseg'
    assert cfg.model.backbone.arch == f'sapiens2_{size}' and cfg.model.backbone.img_size == (1024, 768)
    assert cfg.model.decode_head.in_channels == embed and cfg.model.decode_head.num_classes == 29
    assert cfg.model.data_preprocessor.mean == [123.675, 116.28, 103.53]
    assert cfg.model.data_preprocessor.std == [58.395, 57.12, 57.375] and cfg.model.data_preprocessor.bgr_to_rgb
    optim = cfg.optim_wrapper
    assert optim.optimizer.lr == 5e-4 and optim.optimizer.weight_decay == 0.1
    assert optim.paramwise_cfg.layer_decay_rate == decay and optim.clip_grad.max_norm == clip
    assert (optim.type == 'AmpOptimWrapper') == bf16
    assert cfg.train_cfg.max_iters == iters and cfg.param_scheduler[1].end == iters
    assert cfg.param_scheduler[0].end == cfg.param_scheduler[1].begin == 500
    assert cfg.train_dataloader.batch_size == batch
    assert cfg.train_cfg.val_interval == (10000 if size == '5b' else 1000)


@pytest.mark.parametrize('size', sorted(RECIPE))
def test_official_head_layout(size):
    path = official_data('state_dicts', 'tasks', f'{OFFICIAL.format(size)}.head.json')
    model = build_on_meta(Config.fromfile(CONFIG.format(size)))
    head = {k: v for k, v in layout(model).items() if k.startswith('decode_head.')}
    assert head == json.loads(path.read_text())


def test_official_full_layout_loads_strictly():
    path = official_data('state_dicts', 'tasks', f'{OFFICIAL.format("0.4b")}.full.json')
    expected = json.loads(path.read_text())
    model = build_on_meta(Config.fromfile(CONFIG.format('0.4b')))
    assert layout(model) == expected
    state = {k: torch.empty(shape, device='meta') for k, shape in expected.items()}
    result = model.load_state_dict(state, strict=True, assign=True)
    assert not result.missing_keys and not result.unexpected_keys
