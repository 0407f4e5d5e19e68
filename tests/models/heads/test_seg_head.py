"""Sapiens2SegHead: official parameter layout, shapes, init and loss."""
import json
import math
from pathlib import Path

import pytest
import torch
from mmengine.structures import PixelData
from mmseg.registry import MODELS
from mmseg.structures import SegDataSample

import sapiens2.models.heads.seg_head  # noqa: F401  (registers the head)
import sapiens2.models.losses.seg_cross_entropy_loss  # noqa: F401
import sapiens2.models.losses.seg_dice_loss  # noqa: F401
from tests import official_data

NANO_SEG = str(Path(__file__).parents[3] / 'configs' / 'seg' / 'sapiens2_nano_seg_synthhumans-128x96.py')

EMBED_DIMS = {'0.4b': 1024, '0.8b': 1280, '1b': 1536, '5b': 2432}
HEAD_PARAMS_M = {'0.4b': 11.15, '0.8b': 13.25, '1b': 15.35, '5b': 22.69}


def build_head(in_channels: int = 32, **kwargs) -> torch.nn.Module:
    cfg = dict(type='Sapiens2SegHead', in_channels=in_channels, num_classes=29, loss_decode=[
        dict(type='Sapiens2SegCrossEntropyLoss'), dict(type='Sapiens2DiceLoss')])
    cfg.update(kwargs)
    return MODELS.build(cfg)


@pytest.mark.parametrize('size', sorted(EMBED_DIMS))
def test_official_key_layout(size):
    path = official_data('state_dicts', 'tasks', f'sapiens2_{size}_seg_shutterstock_goliath-1024x768.head.json')
    expected = {k.removeprefix('decode_head.'): v for k, v in json.loads(path.read_text()).items()}
    with torch.device('meta'):
        head = build_head(EMBED_DIMS[size])
    actual = {k: list(v.shape) for k, v in head.state_dict().items()}
    assert actual == expected
    num_params = sum(p.numel() for p in head.parameters())
    assert num_params / 1e6 == pytest.approx(HEAD_PARAMS_M[size], abs=0.006)
    head.load_state_dict({k: torch.empty(v, device='meta') for k, v in expected.items()}, strict=True, assign=True)


def test_forward_upsamples_16x_with_instance_norm_and_silu():
    head = build_head(deconv_out_channels=(16, 16, 16, 16), conv_out_channels=(16, 16), channels=16)
    feats = torch.randn(2, 32, 4, 3)
    logits = head((feats, ))
    assert logits.shape == (2, 29, 64, 48)
    assert torch.equal(head(feats), logits)  # a bare tensor works too
    kinds = [type(m).__name__ for m in head.deconv_layers] + [type(m).__name__ for m in head.conv_layers]
    assert kinds == ['ConvTranspose2d', 'InstanceNorm2d', 'SiLU'] * 4 + ['Conv2d', 'InstanceNorm2d', 'SiLU'] * 2


def test_init_kaiming_for_conv_and_default_for_deconv():
    torch.manual_seed(0)
    head = build_head(in_channels=64, deconv_out_channels=(128, 128, 128, 128), conv_out_channels=(128, 128),
                      channels=128)
    torch.nn.init.constant_(head.conv_seg.bias, 1.0)
    head.init_weights()
    for conv in (head.conv_layers[0], head.conv_layers[3], head.conv_seg):
        fan_out = conv.weight.shape[0] * conv.weight[0, 0].numel()
        assert conv.weight.std().item() == pytest.approx(math.sqrt(2.0 / fan_out), rel=0.15)
        assert torch.count_nonzero(conv.bias) == 0
    deconv = head.deconv_layers[0]
    # PyTorch default (kaiming_uniform a=sqrt(5)) bounds |w| by 1/sqrt(fan_in) with fan_in = weight.size(1) * k * k.
    bound = 1 / math.sqrt(deconv.weight.shape[1] * 16)
    assert deconv.weight.abs().max().item() <= bound + 1e-6


def test_loss_reports_ce_dice_and_accuracy():
    head = build_head(deconv_out_channels=(8, 8, 8, 8), conv_out_channels=(8, 8), channels=8)
    feats = (torch.randn(2, 32, 2, 2), )
    labels = torch.randint(0, 29, (2, 1, 32, 32))
    labels[:, :, :4] = 255
    samples = [SegDataSample(gt_sem_seg=PixelData(data=label)) for label in labels]
    losses = head.loss(feats, samples, train_cfg={})
    assert set(losses) == {'loss_ce', 'loss_dice', 'acc_seg'}
    assert losses['loss_ce'].item() > 0 and 0 < losses['loss_dice'].item() <= 1
    sum(v for k, v in losses.items() if k.startswith('loss')).backward()
    assert head.deconv_layers[0].weight.grad is not None


def test_mismatched_channels_is_a_clear_error():
    with pytest.raises(ValueError, match='channels'):
        build_head(channels=64, conv_out_channels=(32, ))



def test_predicted_logits_are_channels_last_and_give_the_same_labels():
    """mmseg's post-processing resizes the logits to the original size and argmaxes over the classes; with the
    head's channels-last logits the labels are those of the default layout."""
    from sapiens2.apis.builder import init_model
    torch.manual_seed(0)
    model = init_model(NANO_SEG, device='cpu')
    inputs = torch.randn(2, 3, 128, 96)
    metas = [dict(img_shape=(128, 96), ori_shape=(301, 217)) for _ in range(2)]
    with torch.no_grad():
        logits = model.decode_head.predict(model.extract_feat(inputs), metas, test_cfg={})
        reference = torch.nn.functional.interpolate(model.decode_head.forward(model.extract_feat(inputs)),
                                                    size=(128, 96), mode='bilinear')
        samples = model.predict(inputs, [SegDataSample(metainfo=m) for m in metas])
    assert logits.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(logits, reference, rtol=0, atol=1e-6)
    for sample, row in zip(samples, reference):
        upsampled = torch.nn.functional.interpolate(row[None], size=(301, 217), mode='bilinear')[0]
        assert sample.pred_sem_seg.data.shape == (1, 301, 217)
        assert (sample.pred_sem_seg.data[0] == upsampled.argmax(0)).float().mean().item() > 0.999  # ties may differ
