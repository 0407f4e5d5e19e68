"""Our matting model and transformers' ``Sapiens2ForImageMatting`` compute the same alpha and foreground on the same
random weights (saved by us in the official layout, loaded by transformers with zero missing, unexpected or
mismatched keys). Skipped without transformers, except when the environment variable ``CI`` is set: then a missing
transformers is a failure."""
import importlib
import os

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
