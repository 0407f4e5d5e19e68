"""Our matting model and transformers' ``Sapiens2ForImageMatting`` compute the same alpha and foreground on the same
random weights (saved by us in the official layout, loaded by transformers with zero missing, unexpected or
mismatched keys). Skipped without transformers, except when the environment variable ``CI`` is set: then a missing
transformers is a failure."""
import importlib
import os
from pathlib import Path

import pytest
import torch
from sapiens2_matting import MattingHead  # noqa: F401  (registers the head)

from sapiens2.engine.checkpoint import save_weights
from sapiens2.registry import MODELS

ARCH = dict(embed_dims=64, num_layers=18, num_heads=4, feedforward_channels=128, num_tokenizer_layers=1)
UPSAMPLE, CONV = (32, 16, 16), (16, 8)  # x8 with 8x8 patches: outputs at the input size
IMAGE = (64, 48)
PATCH = 8


def import_transformers():
    if os.environ.get('CI'):
        return importlib.import_module('transformers')
    return pytest.importorskip('transformers')


def our_model():
    torch.manual_seed(0)
    model = MODELS.build(dict(
        type='DenseEstimator',
        backbone=dict(type='Sapiens2', arch=ARCH, img_size=IMAGE, patch_size=PATCH, out_type='featmap',
                      pos_embed_rope_dtype='fp32'),
        decode_head=dict(type='MattingHead', in_channels=ARCH['embed_dims'], upsample_channels=UPSAMPLE,
                         conv_out_channels=CONV, conv_kernel_sizes=(3, 3))))
    with torch.no_grad():  # every parameter random, so that each one changes the output
        for name, p in model.named_parameters():
            if p.dim() == 1 and ('ln' in name or 'norm' in name or 'gamma' in name):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.1 * torch.randn_like(p))
    return model.eval()


def transformers_config(transformers):
    return transformers.Sapiens2Config(
        hidden_size=ARCH['embed_dims'], intermediate_size=ARCH['feedforward_channels'],
        num_hidden_layers=ARCH['num_layers'], num_attention_heads=ARCH['num_heads'],
        num_key_value_attention_heads=ARCH['num_heads'] // 2, image_size=list(IMAGE), patch_size=PATCH, num_labels=4,
        head_config=dict(upsample_out_channels=list(UPSAMPLE), upsample_kernel_sizes=[3] * len(UPSAMPLE),
                         use_pixel_shuffle=True, conv_out_channels=list(CONV), conv_kernel_sizes=[3, 3]))


def test_alpha_and_foreground_match_transformers(tmp_path):
    transformers = import_transformers()
    ours = our_model()
    assert [block.attn.num_kv_heads for block in ours.backbone.blocks].count(2) == 2  # GQA in the middle blocks
    state = {k: v for k, v in ours.state_dict().items() if k != 'backbone.rope_embed.periods'}
    save_weights(state, str(tmp_path / 'model.safetensors'))
    transformers_config(transformers).save_pretrained(str(tmp_path))
    theirs, info = transformers.Sapiens2ForImageMatting.from_pretrained(str(tmp_path), output_loading_info=True)
    assert not info['missing_keys'] and not info['unexpected_keys'] and not info['mismatched_keys'], info
    theirs.eval()
    pixels = torch.randn(2, 3, *IMAGE)
    with torch.no_grad():
        foreground, alpha = ours(pixels, mode='tensor').sigmoid().split([3, 1], dim=1)
        expected = theirs(pixel_values=pixels)
    assert alpha.shape == (2, 1, *IMAGE) and foreground.shape == (2, 3, *IMAGE)
    assert alpha.std() > 0.01 and foreground.std() > 0.01
    torch.testing.assert_close(alpha, expected.alphas, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(foreground, expected.foregrounds, atol=1e-5, rtol=1e-4)


def test_the_matting_model_exports_to_and_imports_from_transformers(tmp_path):
    """``sapiens2_matting`` registers MattingHead with sapiens2.interop: the nano config exports to a
    ``Sapiens2ForImageMatting`` folder (sigmoid outputs equal) and loads back with the same weights."""
    import_transformers()
    from sapiens2.interop.transformers import (
        build_model,
        describe_model,
        load_model_from_transformers,
        load_transformers_model,
        model_to_transformers,
    )
    nano = str(Path(__file__).resolve().parents[3] / 'projects' / 'matting' / 'configs' /
               'sapiens2_nano_matting_synthhumans-128x96.py')
    ours = build_model(nano, device='cpu', cfg_options={'model.backbone.pos_embed_rope_dtype': 'fp32'})
    torch.manual_seed(1)
    with torch.no_grad():
        for p in ours.parameters():
            p.add_(0.05 * torch.randn_like(p))
    theirs = load_transformers_model(model_to_transformers(ours, str(tmp_path / 'hf')))
    assert type(theirs).__name__ == 'Sapiens2ForImageMatting'
    pixels = torch.randn(1, 3, 128, 96)
    with torch.no_grad():
        logits = ours(pixels, mode='tensor')
        expected = theirs(pixel_values=pixels)
    assert logits.shape == (1, 4, 64, 48)
    torch.testing.assert_close(expected.foregrounds, logits[:, :3].sigmoid(), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(expected.alphas, logits[:, 3:].sigmoid(), atol=1e-5, rtol=1e-4)
    back = load_model_from_transformers(str(tmp_path / 'hf'), nano)
    for key, value in ours.state_dict().items():
        torch.testing.assert_close(back.state_dict()[key], value, atol=0, rtol=0, msg=key)
    hf_class, fields = describe_model(build_model(nano.replace('nano_matting_synthhumans-128x96',
                                                               '1b_matting_humans-1024x768')))
    assert hf_class == 'Sapiens2ForImageMatting' and fields['num_labels'] == 4
    assert fields['head_config']['upsample_out_channels'] == [768, 512, 256, 128]
    assert fields['head_config']['conv_out_channels'] == [64, 32, 16]
