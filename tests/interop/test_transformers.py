"""sapiens2 <-> transformers Sapiens2: export/import round trips, zero-key loading and numerics on the same weights.

Every model runs on random weights (norm gains and LayerScale perturbed, so no branch is trivial) at 128x96. With
``pos_embed_rope_dtype='fp32'`` ours and transformers' agree to float32 rounding; with the default bf16 tables they
differ by about 1e-4 to 1e-2 (transformers computes RoPE in fp32; docs/differences.md).
"""
import json
import os.path as osp

import pytest
import torch
from safetensors.torch import load_file

from sapiens2.engine.checkpoint import load_weights
from sapiens2.interop.transformers import (
    TransformersConversionError,
    build_model,
    export_to_transformers,
    import_from_transformers,
    load_model_from_transformers,
    load_transformers_model,
    model_to_transformers,
    output_differences,
)

CONFIGS = {
    'pose': 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py',
    'seg': 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py',
    'normal': 'projects/normal/configs/sapiens2_nano_normal_synthhumans-128x96.py',
    'pointmap': 'projects/pointmap/configs/sapiens2_nano_pointmap_synthhumans-128x96.py',
}
AUTO_CLASSES = {'pose': 'AutoModelForPoseEstimation', 'seg': 'AutoModelForSemanticSegmentation',
                'normal': 'AutoModelForNormalEstimation', 'pointmap': 'AutoModelForPointmapEstimation'}
FP32_RTOL = 1e-5  # max |difference| / max(1, max |output|) with fp32 RoPE tables
BF16_RTOL = 1e-2
IMAGE = (128, 96)


def rope(dtype: str, bare: bool = False) -> dict:
    return {('model.' if bare else 'model.backbone.') + 'pos_embed_rope_dtype': dtype}


def randomize(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Random weights everywhere, including the LayerScale and norm gains that the init sets to constants."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if 'gamma' in name or 'lambda1' in name:
                param.copy_(torch.rand(param.shape, generator=generator) + 0.5)
            elif param.dim() == 1 and ('ln' in name or 'norm' in name):
                param.copy_(1 + 0.1 * torch.randn(param.shape, generator=generator))
            else:
                param.copy_(0.05 * torch.randn(param.shape, generator=generator))
    return model.eval()


def images(batch: int = 2, size=IMAGE) -> torch.Tensor:
    return torch.randn(batch, 3, *size, generator=torch.Generator().manual_seed(1))


def relative(differences: dict, model, inputs) -> dict:
    from sapiens2.interop.transformers_compare import _our_outputs
    scales = [max(1.0, float(out.abs().max())) for out in _our_outputs(model, inputs)]
    return {name: value / scale for (name, value), scale in zip(differences.items(), scales)}


@pytest.mark.parametrize('task', sorted(CONFIGS))
def test_task_export_loads_in_transformers_and_matches(task, hf, tmp_path):
    model = randomize(build_model(CONFIGS[task], device='cpu', cfg_options=rope('fp32')))
    out = model_to_transformers(model, str(tmp_path / task))
    hf_model = load_transformers_model(out)  # zero missing / unexpected / mismatched keys, else it raises
    config = json.loads((tmp_path / task / 'config.json').read_text())
    assert type(hf_model).__name__ == config['architectures'][0]
    assert config['sapiens2_pos_embed_rope_dtype'] == 'fp32'
    differences = relative(output_differences(model, hf_model, images()), model, images())
    assert max(differences.values()) < FP32_RTOL, differences
    auto = getattr(hf, AUTO_CLASSES[task]).from_pretrained(out).eval()
    assert type(auto) is type(hf_model)
    with torch.no_grad():
        assert torch.equal(auto(pixel_values=images()).to_tuple()[0], hf_model(pixel_values=images()).to_tuple()[0])


@pytest.mark.parametrize('task', sorted(CONFIGS))
def test_bf16_rope_tables_are_the_only_difference(task, hf, tmp_path):
    """Same weights, our default bf16 RoPE: visibly off transformers; switching our tables to fp32 closes the gap."""
    bf16 = randomize(build_model(CONFIGS[task], device='cpu', cfg_options=rope('bf16')))
    hf_model = load_transformers_model(model_to_transformers(bf16, str(tmp_path / 'out')))
    assert json.loads((tmp_path / 'out' / 'config.json').read_text())['sapiens2_pos_embed_rope_dtype'] == 'bf16'
    assert 'bf16' in (tmp_path / 'out' / 'README.md').read_text()
    fp32 = build_model(CONFIGS[task], device='cpu', cfg_options=rope('fp32')).eval()
    fp32.load_state_dict(bf16.state_dict())
    fp32.backbone.rope_embed.reset_parameters()
    off = relative(output_differences(bf16, hf_model, images()), bf16, images())
    exact = relative(output_differences(fp32, hf_model, images()), fp32, images())
    assert max(exact.values()) < FP32_RTOL
    assert 1e-5 < max(off.values()) < BF16_RTOL, off


def backbone_cfg(**kwargs) -> dict:
    """0.1b widths (768 channels, 12 heads of 64) with 3 blocks: MHSA, GQA (6 kv heads), MHSA."""
    cfg = dict(type='Sapiens2', arch=dict(embed_dims=768, num_layers=3, num_heads=12, feedforward_channels=3072,
                                          num_tokenizer_layers=2),
               img_size=IMAGE, patch_size=16, out_type='raw', pos_embed_rope_dtype='fp32',
               layer_cfgs=[dict(num_kv_heads=12), dict(num_kv_heads=6), dict(num_kv_heads=12)])
    cfg.update(kwargs)
    return cfg


def test_backbone_0p1b_widths_match_model_and_backbone_classes(hf, tmp_path):
    from sapiens2.models import Sapiens2
    model = randomize(Sapiens2(**{k: v for k, v in backbone_cfg().items() if k != 'type'}))
    out = model_to_transformers(model, str(tmp_path / 'bb'))
    config = json.loads((tmp_path / 'bb' / 'config.json').read_text())
    assert config['architectures'] == ['Sapiens2Model'] and config['num_key_value_heads_per_layer'] == [12, 6, 12]
    hf_model = load_transformers_model(out)
    differences = relative(output_differences(model, hf_model, images()), model, images())
    assert max(differences.values()) < FP32_RTOL, differences
    # the same weights as transformers' AutoModel and Sapiens2Backbone (feature maps)
    assert type(hf.AutoModel.from_pretrained(out)).__name__ == 'Sapiens2Model'
    backbone = load_transformers_model(out, 'Sapiens2Backbone')
    model.out_type = 'featmap'
    with torch.no_grad():
        ours, theirs = model(images())[-1], backbone(pixel_values=images()).feature_maps[-1]
    assert ours.shape == theirs.shape == (2, 768, 8, 6)
    assert float((ours - theirs).abs().max()) < FP32_RTOL * max(1.0, float(ours.abs().max()))


def test_exported_weights_are_the_official_layout(hf, tmp_path):
    model = randomize(build_model(CONFIGS['pose'], device='cpu'))
    model_to_transformers(model, str(tmp_path / 'pose'))
    stored = load_file(str(tmp_path / 'pose' / 'model.safetensors'))
    expected = {('decode_head.' + k[5:] if k.startswith('head.') else k): v for k, v in model.state_dict().items()}
    assert sorted(stored) == sorted(expected)  # backbone.* / decode_head.*, incl. backbone.rope_embed.periods
    assert all(torch.equal(stored[k], expected[k]) for k in stored)
    config = json.loads((tmp_path / 'pose' / 'config.json').read_text())
    assert len(config['id2label']) == 308
    assert config['id2label']['0'] == 'nose' and [1, 2] in config['flip_pairs']


@pytest.mark.parametrize('task', sorted(CONFIGS))
def test_round_trip_is_bit_exact(task, hf, tmp_path):
    model = randomize(build_model(CONFIGS[task], device='cpu'))
    model_to_transformers(model, str(tmp_path / 'hf'))
    checkpoint = import_from_transformers(str(tmp_path / 'hf'), CONFIGS[task], str(tmp_path / 'back.safetensors'))
    reloaded = build_model(CONFIGS[task], device='cpu')
    from sapiens2.engine.checkpoint import load_model_weights
    load_model_weights(reloaded, checkpoint, strict=True)
    original, back = model.state_dict(), reloaded.state_dict()
    assert sorted(original) == sorted(back)
    assert all(torch.equal(original[k], back[k]) for k in original)


@pytest.mark.parametrize('task', sorted(CONFIGS))
def test_transformers_checkpoint_loads_here_for_fine_tuning(task, hf, tmp_path):
    """A model created and saved by transformers (its own init and save_pretrained) loads into our config."""
    ours = build_model(CONFIGS[task], device='meta')
    from sapiens2.interop.transformers_config import describe_model
    hf_class, fields = describe_model(ours)
    torch.manual_seed(3)
    hf_model = getattr(hf, hf_class)(hf.Sapiens2Config(**fields)).eval()
    randomize(hf_model)
    hf_model.save_pretrained(str(tmp_path / 'hf'))
    model = load_model_from_transformers(str(tmp_path / 'hf'), CONFIGS[task])  # fp32 RoPE by default
    assert model.backbone.rope_embed.dtype == torch.float32
    differences = relative(output_differences(model, hf_model, images()), model, images())
    assert max(differences.values()) < FP32_RTOL, differences
    # ... and as a checkpoint file for load_from / tools/test.py
    checkpoint = import_from_transformers(str(tmp_path / 'hf'), CONFIGS[task], str(tmp_path / 'ckpt.pth'))
    weights = load_weights(checkpoint)
    assert all(k.startswith(('backbone.', 'decode_head.')) for k in weights)


def test_layer_scale_free_blocks_export_with_unit_scale(hf, tmp_path):
    from sapiens2.models import Sapiens2
    model = randomize(Sapiens2(**{k: v for k, v in backbone_cfg(layer_scale_init_value=0.0).items() if k != 'type'}))
    assert not any('gamma' in k for k in model.state_dict())
    hf_model = load_transformers_model(model_to_transformers(model, str(tmp_path / 'bb')))
    assert all(torch.equal(layer.layer_scale1.lambda1, torch.ones(768)) for layer in hf_model.model.layer)
    assert max(output_differences(model, hf_model, images()).values()) < FP32_RTOL * 10


def test_pretrain_checkpoint_exports_as_backbone(hf, tmp_path):
    """A bare backbone checkpoint (pretraining) with any config whose backbone matches: --backbone-only."""
    task = build_model(CONFIGS['seg'], device='cpu')
    backbone = randomize(task.backbone)
    from sapiens2.engine.checkpoint import save_weights
    save_weights(backbone.state_dict(), str(tmp_path / 'pretrain.safetensors'))
    out = export_to_transformers(CONFIGS['seg'], str(tmp_path / 'pretrain.safetensors'), str(tmp_path / 'hf'),
                                 backbone_only=True)
    assert json.loads((tmp_path / 'hf' / 'config.json').read_text())['architectures'] == ['Sapiens2Model']
    back = import_from_transformers(out, CONFIGS['seg'], str(tmp_path / 'back.pth'), backbone_only=True)
    weights = load_weights(back)
    assert sorted(weights) == sorted(backbone.state_dict())
    assert all(torch.equal(weights[k], v) for k, v in backbone.state_dict().items())


def test_import_checks_config_json_against_the_config(hf, tmp_path):
    model = randomize(build_model(CONFIGS['pose'], device='cpu'))
    out = model_to_transformers(model, str(tmp_path / 'pose'))
    with pytest.raises(TransformersConversionError,
                       match=r'holds a pose model \(Sapiens2ForPoseEstimation\) but the config builds a seg model'):
        import_from_transformers(out, CONFIGS['seg'], str(tmp_path / 'x.pth'))
    wider = {'model.backbone.arch': 'sapiens2_tiny', 'model.head.in_channels': 128}
    with pytest.raises(TransformersConversionError, match='hidden_size: config.json has 64, the config gives 128'):
        import_from_transformers(out, CONFIGS['pose'], str(tmp_path / 'x.pth'), cfg_options=wider)
    fewer = {'model.head.out_channels': 17}
    with pytest.raises(TransformersConversionError, match='num_labels: config.json has 308'):
        import_from_transformers(out, CONFIGS['pose'], str(tmp_path / 'x.pth'), cfg_options=fewer)
    assert not osp.exists(tmp_path / 'x.pth')


def test_outputs_are_never_overwritten_silently(hf, tmp_path):
    model = randomize(build_model(CONFIGS['pose'], device='cpu'))
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'README.md').write_text('mine')
    with pytest.raises(FileExistsError, match='README.md'):
        model_to_transformers(model, str(tmp_path / 'out'))
    assert (tmp_path / 'out' / 'README.md').read_text() == 'mine'
    model_to_transformers(model, str(tmp_path / 'out'), overwrite=True)
    (tmp_path / 'ckpt.pth').write_text('mine')
    with pytest.raises(FileExistsError, match='ckpt.pth exists'):
        import_from_transformers(str(tmp_path / 'out'), CONFIGS['pose'], str(tmp_path / 'ckpt.pth'))
    assert (tmp_path / 'ckpt.pth').read_text() == 'mine'


def test_export_checks_the_checkpoint_strictly(hf, tmp_path):
    model = build_model(CONFIGS['pose'], device='cpu')
    state = model.state_dict()
    state.pop('head.conv_pose.bias')
    from sapiens2.engine.checkpoint import save_weights
    save_weights(state, str(tmp_path / 'partial.safetensors'))
    with pytest.raises(TransformersConversionError, match=r'missing \(1\): head.conv_pose.bias'):
        export_to_transformers(CONFIGS['pose'], str(tmp_path / 'partial.safetensors'), str(tmp_path / 'out'))


def test_a_project_head_plugs_in_with_register_head_converter(hf, tmp_path):
    """The extension point a matting project uses: a dense-trunk head with ``conv_matting`` (4 channels) exports to
    transformers' Sapiens2ForImageMatting, whose foregrounds/alphas are the sigmoid of our output."""
    from torch import nn

    from sapiens2.interop.transformers_config import (
        HEAD_CONVERTERS,
        HeadConverter,
        dense_trunk_describer,
        register_head_converter,
    )
    from sapiens2.models import Sapiens2
    from sapiens2.models.heads import DenseTrunkHead

    class ToyMattingHead(DenseTrunkHead):
        def __init__(self, in_channels):
            super().__init__(in_channels, upsample_channels=(16, ), conv_out_channels=(8, ))
            self.conv_matting = nn.Conv2d(self.trunk_channels, 4, 1)

        def forward(self, x):
            return self.conv_matting(self.forward_trunk(x))

    model = nn.Module()  # backbone + decode_head, as DenseEstimator
    model.backbone = Sapiens2(arch='sapiens2_nano', img_size=IMAGE, patch_size=8, out_type='featmap',
                              pos_embed_rope_dtype='fp32')
    model.decode_head = ToyMattingHead(64)
    randomize(model)
    register_head_converter('ToyMattingHead', HeadConverter('matting', 'Sapiens2ForImageMatting', 'decode_head',
                                                            dense_trunk_describer('conv_matting')))
    try:
        hf_model = load_transformers_model(model_to_transformers(model, str(tmp_path / 'matting')))
    finally:
        del HEAD_CONVERTERS['ToyMattingHead']
    assert type(hf_model).__name__ == 'Sapiens2ForImageMatting'
    with torch.no_grad():
        ours = model.decode_head(model.backbone(images())[-1]).sigmoid()
        theirs = hf_model(pixel_values=images())
    torch.testing.assert_close(theirs.foregrounds, ours[:, :3], atol=1e-5, rtol=0)
    torch.testing.assert_close(theirs.alphas, ours[:, 3:], atol=1e-5, rtol=0)
