"""Pretraining configs: the paper's recipe, official backbone layout on export, optimizer parameter groups."""
import json
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

from sapiens2.registry import MODELS
from sapiens2_pretrain.export import backbone_state_dict
from tests import official_data

CONFIG_DIR = 'projects/pretrain/configs'
SIZES = ['0.4b', '0.8b', '1b', '5b']


def _config(name: str) -> Config:
    return Config.fromfile(osp.join(CONFIG_DIR, name))


@pytest.mark.parametrize('size', SIZES)
def test_large_config_recipe_and_official_export_layout(size):
    cfg = _config(f'sapiens2_{size}_pretrain_humans-1024x768.py')
    assert cfg.model.backbone.arch == f'sapiens2_{size}' and cfg.model.backbone.img_size == (1024, 768)
    assert cfg.model.loss_weights == dict(mae=1.0, dino=0.4, koleo=0.04)
    assert cfg.model.mask_generator.mask_ratio == 0.75 and cfg.model.dino_head.num_prototypes == 65536
    assert cfg.optim_wrapper.optimizer.betas == (0.9, 0.95) and cfg.optim_wrapper.optimizer.lr == 1e-4
    assert cfg.optim_wrapper.optimizer.weight_decay == 0.05 and cfg.optim_wrapper.clip_grad.max_norm == 5.0
    warmup, cosine = cfg.param_scheduler
    assert (warmup.end, cosine.begin, cosine.eta_min, cosine.end) == (1000, 1000, 1e-7, 500000)
    assert cfg.custom_hooks == [dict(type='TeacherEMAHook', momentum=0.992)]
    pipeline = {t['type']: t for t in cfg.train_dataloader.dataset.pipeline}
    assert pipeline['MultiViewCrop']['local_size'] == (384, 288) and pipeline['MultiViewCrop']['num_local'] == 4
    with torch.device('meta'), DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = MODELS.build(cfg.model)
    exported = backbone_state_dict(model.state_dict(), 'student')
    reference = json.loads(official_data('state_dicts', f'sapiens2_{size}.json').read_text())
    assert {k: list(v.shape) for k, v in exported.items()} == reference


def test_the_tiny_config_pretrains_from_scratch_and_the_others_keep_the_official_values():
    import inspect

    from sapiens2.models.backbones.sapiens2 import Sapiens2
    tiny = _config('sapiens2_tiny_pretrain_synthhumans-128x96.py').model
    assert tiny.backbone.layer_scale_init_value == 1.0 and tiny.dino_head.num_prototypes == 64
    assert (tiny.dino_loss.warmup_teacher_temp, tiny.dino_loss.teacher_temp) == (0.02, 0.02)
    official = inspect.signature(Sapiens2).parameters['layer_scale_init_value'].default
    for name in [f'sapiens2_{size}_pretrain_humans-1024x768.py' for size in SIZES] + [
            'sapiens2_nano_pretrain_synthhumans-128x96.py']:
        cfg = _config(name)
        assert cfg.model.backbone.get('layer_scale_init_value', official) == official == 1e-4
        assert (cfg.model.dino_loss.warmup_teacher_temp, cfg.model.dino_loss.teacher_temp) == (0.065, 0.07)


def test_optimizer_groups_skip_teacher_and_exempt_norms_biases_tokens(tiny_pretrainer):
    cfg = _config('sapiens2_nano_pretrain_synthhumans-128x96.py')
    model = tiny_pretrainer()
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    decay = {id(p): g['weight_decay'] for g in wrapper.optimizer.param_groups for p in g['params']}
    names = {id(p): n for n, p in model.named_parameters()}
    student = [n for n, p in model.named_parameters() if not n.startswith('teacher.')]
    assert sorted(names[i] for i in decay) == sorted(student)
    by_name = {names[i]: wd for i, wd in decay.items()}
    for name in ['backbone.cls_token', 'backbone.storage_tokens', 'mae_decoder.mask_token', 'backbone.ln1.weight',
                 'backbone.blocks.0.attn.wq.bias', 'backbone.blocks.0.attn.gamma.weight',
                 'backbone.blocks.0.attn.q_norm.weight', 'mae_decoder.norm.weight']:
        assert by_name[name] == 0.0, name
    for name in ['backbone.blocks.0.attn.wq.weight', 'backbone.patch_embed.projection.weight',
                 'dino_head.prototypes.weight', 'mae_decoder.embed.weight']:
        assert by_name[name] == 0.05, name
