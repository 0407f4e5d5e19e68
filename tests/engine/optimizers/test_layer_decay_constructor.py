import pytest
import torch
from torch import nn

from sapiens2.engine.optimizers import Sapiens2LayerDecayOptimWrapperConstructor, clean_param_name, get_layer_id
from sapiens2.models import Sapiens2

BASE_LR, WD, RATE = 5e-4, 0.1, 0.8


class Estimator(nn.Module):

    def __init__(self):
        super().__init__()
        self.backbone = Sapiens2(arch='sapiens2_nano', img_size=(32, 32), use_tokenizer=False)
        self.decode_head = nn.Sequential(nn.Conv2d(64, 8, 1), nn.InstanceNorm2d(8))


def build_groups(model, **paramwise):
    constructor = Sapiens2LayerDecayOptimWrapperConstructor(
        dict(optimizer=dict(type='AdamW', lr=BASE_LR, weight_decay=WD)),
        dict(layer_decay_rate=RATE, **paramwise))
    wrapper = constructor(model)
    return {name: (group['lr'], group['weight_decay'])
            for group in wrapper.optimizer.param_groups for name in group['param_names']}


def test_lr_and_weight_decay_follow_spec():
    groups = build_groups(Estimator())
    num_layers = 2  # nano; L = N + 2 = 4, lr = base * rate ** (L - 1 - id)
    assert groups['backbone.cls_token'] == pytest.approx((BASE_LR * RATE**3, WD))  # 3-D: decayed
    assert groups['backbone.storage_tokens'] == pytest.approx((BASE_LR * RATE**3, WD))
    assert groups['backbone.patch_embed.projection.weight'] == pytest.approx((BASE_LR * RATE**3, WD))
    assert groups['backbone.patch_embed.projection.bias'] == pytest.approx((BASE_LR * RATE**3, 0.0))
    assert groups['backbone.blocks.0.attn.wq.weight'] == pytest.approx((BASE_LR * RATE**2, WD))
    assert groups['backbone.blocks.1.ffn.w12.weight'] == pytest.approx((BASE_LR * RATE**1, WD))
    assert groups['backbone.blocks.1.attn.gamma.weight'] == pytest.approx((BASE_LR * RATE, 0.0))
    assert groups['backbone.blocks.0.ln1.weight'] == pytest.approx((BASE_LR * RATE**2, 0.0))
    assert groups['backbone.ln1.weight'] == pytest.approx((BASE_LR, 0.0))
    assert groups['decode_head.0.weight'] == pytest.approx((BASE_LR, WD))
    assert groups['decode_head.0.bias'] == pytest.approx((BASE_LR, 0.0))
    assert num_layers == Estimator().backbone.num_layers


def test_tokenizer_and_pos_embed_rules():
    assert get_layer_id('backbone.tokenizer.blocks.0.attn.wq.weight', 40) == 0
    assert get_layer_id('backbone.blocks.39.ffn.w3.weight', 40) == 40
    assert get_layer_id('backbone.ln1.weight', 40) == 41
    assert get_layer_id('decode_head.conv_seg.weight', 40) == 41
    model = Estimator()
    model.backbone = Sapiens2(arch='sapiens2_nano', img_size=(128, 64), use_tokenizer=True)
    groups = build_groups(model)
    assert groups['backbone.tokenizer.local_pos_embed'][1] == 0.0  # name contains pos_embed
    assert groups['backbone.tokenizer.w_cls'][1] == WD  # 3-D special token: decayed (official rule)


def test_frozen_parameters_are_skipped():
    model = Estimator()
    model.backbone = Sapiens2(arch='sapiens2_nano', img_size=(32, 32), frozen_stages=1)
    groups = build_groups(model)
    assert 'backbone.blocks.0.attn.wq.weight' not in groups and 'backbone.blocks.1.attn.wq.weight' in groups


def test_wrapped_names_and_flattened_shapes_give_the_same_groups():
    assert clean_param_name('module._fsdp_wrapped_module.backbone.blocks.0._checkpoint_wrapped_module.ln1.weight') \
        == 'backbone.blocks.0.ln1.weight'
    plain = build_groups(Estimator())

    class Wrapper(nn.Module):

        def __init__(self, inner):
            super().__init__()
            self.module = inner

    torch.manual_seed(0)
    wrapped = build_groups(Wrapper(Estimator()))
    assert wrapped == plain


def test_unknown_paramwise_key_is_an_error():
    with pytest.raises(ValueError, match='layer_decay'):
        Sapiens2LayerDecayOptimWrapperConstructor(dict(optimizer=dict(type='AdamW', lr=1e-3)), dict(layer_decay=0.8))
