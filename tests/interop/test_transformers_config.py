"""Our models as transformers ``Sapiens2Config`` fields: every shipped config converts or fails for a stated reason,
and each setting transformers cannot express raises a clear error (all on the meta device)."""
import glob
import os.path as osp

import pytest
import torch
from mmpose.registry import MODELS as POSE_MODELS
from mmseg.registry import MODELS as SEG_MODELS

import sapiens2_normal  # noqa: F401  (the projects register their heads' converters)
import sapiens2_pointmap  # noqa: F401
from sapiens2.interop.transformers import build_model
from sapiens2.interop.transformers_config import (
    HEAD_CONVERTERS,
    TransformersConversionError,
    backbone_fields,
    describe_model,
    mismatches,
)
from sapiens2.models import Sapiens2
from tests.conftest import REPO_ROOT

TOKENIZER = 'the 4K window tokenizer'
NOT_CONVERTIBLE = {'1b-4k': TOKENIZER, 'albedo': 'No transformers conversion for the head AlbedoHead',
                   'tiny_pose': r'conv layer 0 \(kernel 3\): transformers pads these convs by 0'}


def shipped_configs():
    patterns = ['configs/pose/*.py', 'configs/seg/*.py', 'projects/normal/configs/*.py',
                'projects/pointmap/configs/*.py', 'projects/albedo/configs/*.py', 'projects/pretrain/configs/*.py']
    return sorted(osp.relpath(p, REPO_ROOT) for pattern in patterns for p in glob.glob(osp.join(REPO_ROOT, pattern)))


@pytest.mark.parametrize('config', shipped_configs())
def test_every_shipped_config_converts_or_says_why(config):
    backbone_only = 'pretrain' in config
    model = build_model(config, backbone_only=backbone_only)
    reason = next((why for key, why in NOT_CONVERTIBLE.items() if key in osp.basename(config)), None)
    if reason:
        with pytest.raises(TransformersConversionError, match=reason):
            describe_model(model)
        return
    hf_class, fields = describe_model(model)
    expected = {'pose': 'Sapiens2ForPoseEstimation', 'seg': 'Sapiens2ForSemanticSegmentation',
                'normal': 'Sapiens2ForNormalEstimation', 'pointmap': 'Sapiens2ForPointmapEstimation',
                'pretrain': 'Sapiens2Model'}
    assert hf_class == next(cls for key, cls in expected.items() if f'/{key}/' in f'/{config}')
    backbone = model if backbone_only else model.backbone
    assert fields['hidden_size'] == backbone.embed_dims and fields['num_hidden_layers'] == backbone.num_layers
    assert len(fields['num_key_value_heads_per_layer']) == backbone.num_layers


def test_official_0p4b_pose_and_seg_heads():
    pose = describe_model(build_model('configs/pose/sapiens2_0.4b_pose_goliath-1024x768.py'))[1]
    assert pose['head_config'] == dict(upsample_out_channels=[1024, 768], upsample_kernel_sizes=[4, 4],
                                       use_pixel_shuffle=False, conv_out_channels=[512, 512, 256],
                                       conv_kernel_sizes=[1, 1, 1])
    assert pose['num_labels'] == 308 and len(pose['flip_pairs']) == 146
    seg = describe_model(build_model('configs/seg/sapiens2_0.4b_seg_bodypart29-1024x768.py'))[1]
    assert seg['head_config']['upsample_out_channels'] == [512, 256, 128, 64]
    assert seg['num_labels'] == 29 and seg['id2label'][0] == 'Background'
    assert (pose['hidden_size'], pose['intermediate_size'], pose['num_attention_heads']) == (1024, 4096, 16)
    assert pose['num_key_value_heads_per_layer'] == [16] * 8 + [8] * 8 + [16] * 8


def test_official_pointmap_scale_branch():
    config = 'projects/pointmap/configs/sapiens2_0.4b_pointmap_render_people-1024x768.py'
    fields = describe_model(build_model(config))[1]
    head = fields['head_config']
    assert head['use_pixel_shuffle'] and head['upsample_kernel_sizes'] == [3] * len(head['upsample_out_channels'])
    assert head['scale_final_input_size'] == 128 * 8 * 6 and len(head['scale_final_hidden_sizes']) == 2
    assert fields['num_labels'] == 3


@pytest.mark.parametrize('arch', ['sapiens2_0.1b', 'sapiens2_0.4b', 'sapiens2_0.8b', 'sapiens2_1b', 'sapiens2_5b'])
def test_gqa_placement_equals_transformers_default(arch, hf):
    with torch.device('meta'):
        backbone = Sapiens2(arch=arch)
    fields = backbone_fields(backbone)
    theirs = hf.Sapiens2Config(hidden_size=fields['hidden_size'], num_hidden_layers=fields['num_hidden_layers'],
                               num_attention_heads=fields['num_attention_heads'],
                               num_key_value_attention_heads=fields['num_attention_heads'] // 2)
    assert fields['num_key_value_heads_per_layer'] == theirs.num_key_value_heads_per_layer


@pytest.mark.parametrize('kwargs, message', [
    (dict(use_tokenizer=True, img_size=(256, 192)), TOKENIZER),
    (dict(with_cls_token=False), 'with_cls_token=False'),
    (dict(final_norm=False), 'final_norm=False'),
    (dict(pos_embed_rope_min_period=1.0, pos_embed_rope_max_period=100.0), 'min_period/max_period'),
    (dict(pos_embed_rope_normalize_coords='max'), "normalize_coords='max'"),
    (dict(patch_cfg=dict(bias=False)), 'patch_cfg'),
])
def test_backbone_settings_transformers_lacks(kwargs, message):
    with torch.device('meta'):
        backbone = Sapiens2(**dict(dict(arch='sapiens2_nano', img_size=(64, 48)), **kwargs))
    with pytest.raises(TransformersConversionError, match=message):
        backbone_fields(backbone)


def pose_model(**head):
    cfg = dict(type='TopdownPoseEstimator',
               backbone=dict(type='Sapiens2', arch='sapiens2_nano', img_size=(64, 48), out_type='featmap'),
               head=dict(type='Sapiens2HeatmapHead', in_channels=64, out_channels=17, **head))
    with torch.device('meta'):
        return POSE_MODELS.build(cfg)


@pytest.mark.parametrize('head, message', [
    (dict(deconv_out_channels=(8, 8), deconv_kernel_sizes=(2, 4)), 'deconv layer 0 .kernel 2.*use kernel 4'),
    (dict(deconv_out_channels=(8, 8), deconv_kernel_sizes=(4, 3)), 'deconv layer 1 .kernel 3.'),
    (dict(deconv_out_channels=(8, 8, 8), deconv_kernel_sizes=(4, 4, 4)), '3 deconv layers.*takes 1 to 2'),
    (dict(deconv_out_channels=(), deconv_kernel_sizes=()), '0 deconv layers'),
    (dict(deconv_out_channels=(8, ), deconv_kernel_sizes=(4, ), conv_out_channels=(8, ), conv_kernel_sizes=(3, )),
     'conv layer 0 .kernel 3.*use kernel 1'),
    (dict(deconv_out_channels=(8, ), deconv_kernel_sizes=(4, ), conv_out_channels=(8, ) * 4,
          conv_kernel_sizes=(1, ) * 4), '4 conv layers.*at most 3'),
])
def test_pose_heads_transformers_lacks(head, message):
    with pytest.raises(TransformersConversionError, match=message):
        describe_model(pose_model(**head))


def test_task_head_must_read_the_last_feature_map():
    model = pose_model(deconv_out_channels=(8, ), deconv_kernel_sizes=(4, ))
    model.backbone.out_indices = [0]
    with pytest.raises(TransformersConversionError, match='read the last layer'):
        describe_model(model)
    model.backbone.out_indices, model.backbone.out_type = [1], 'raw'
    with pytest.raises(TransformersConversionError, match="out_type='featmap'"):
        describe_model(model)
    assert describe_model(model, backbone_only=True)[0] == 'Sapiens2Model'


def test_seg_head_and_auxiliary_head():
    def seg(**extra):
        cfg = dict(type='EncoderDecoder',
                   backbone=dict(type='Sapiens2', arch='sapiens2_nano', img_size=(64, 48), out_type='featmap'),
                   decode_head=dict(type='Sapiens2SegHead', in_channels=64, num_classes=5,
                                    deconv_out_channels=(16, ), conv_out_channels=(16, ), channels=16,
                                    conv_kernel_size=3), **extra)
        with torch.device('meta'):
            return SEG_MODELS.build(cfg)

    with pytest.raises(TransformersConversionError, match='conv layer 0 .kernel 3.'):
        describe_model(seg())
    aux = dict(type='FCNHead', in_channels=64, channels=8, num_classes=5, num_convs=1)
    with pytest.raises(TransformersConversionError, match='auxiliary_head'):
        describe_model(seg(auxiliary_head=aux))


def test_pointmap_scale_mlp_needs_two_hidden_layers():
    cfg = 'projects/pointmap/configs/sapiens2_nano_pointmap_synthhumans-128x96.py'
    model = build_model(cfg, cfg_options={'model.decode_head.scale_hidden_channels': (16, )})
    with pytest.raises(TransformersConversionError, match='exactly 2 hidden layers'):
        describe_model(model)


def test_mismatches_name_each_field():
    expected = dict(hidden_size=64, num_labels=3, head_config=dict(upsample_out_channels=[8], use_pixel_shuffle=True))
    config = dict(hidden_size=64, num_labels=4, head_config=dict(upsample_out_channels=(8, ), use_pixel_shuffle=None))
    assert mismatches(expected, config) == [
        'num_labels: config.json has 4, the config gives 3',
        'head_config.use_pixel_shuffle: config.json has False, the config gives True']
    assert mismatches(dict(hidden_size=64), dict(hidden_size=64, head_config=dict(conv_out_channels=[1]))) == []


def test_registered_heads():
    assert {name: c.hf_class for name, c in HEAD_CONVERTERS.items()}.items() >= {
        'Sapiens2HeatmapHead': 'Sapiens2ForPoseEstimation', 'Sapiens2SegHead': 'Sapiens2ForSemanticSegmentation',
        'NormalHead': 'Sapiens2ForNormalEstimation', 'PointmapHead': 'Sapiens2ForPointmapEstimation'}.items()
