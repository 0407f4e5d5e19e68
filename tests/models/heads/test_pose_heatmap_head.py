"""Sapiens2HeatmapHead: official key layout for all sizes, init, forward, loss, flip-test prediction."""
import json

import numpy as np
import pytest
import torch
from mmengine.structures import InstanceData, PixelData
from mmpose.registry import MODELS
from mmpose.structures import PoseDataSample
from torch import nn

from sapiens2.models.heads.pose_heatmap_head import Sapiens2HeatmapHead
from tests import official_data

HEADS = {  # size: (in_channels, deconv_out_channels, conv_out_channels) of the official heads
    '0.4b': (1024, (1024, 768), (512, 512, 256)),
    '0.8b': (1280, (1024, 768), (512, 512, 256)),
    '1b': (1536, (1536, 1024), (768, 512, 256)),
    '5b': (2432, (1024, 768), (512, 512, 256)),
}
PARAMS_0_4B = 30_226_996


def tiny_head(**kwargs) -> Sapiens2HeatmapHead:
    cfg = dict(type='Sapiens2HeatmapHead', in_channels=16, out_channels=4, deconv_out_channels=(8, 8),
               conv_out_channels=(8, ), conv_kernel_sizes=(1, ),
               decoder=dict(type='UDPHeatmap', input_size=(24, 32), heatmap_size=(12, 16), sigma=1.0))
    cfg.update(kwargs)
    return MODELS.build(cfg)


@pytest.mark.parametrize('size', sorted(HEADS))
def test_official_key_layout(size):
    path = official_data('state_dicts', 'tasks',
                         f'sapiens2_{size}_keypoints308_shutterstock_goliath_3po-1024x768.head.json')
    in_channels, deconv, conv = HEADS[size]
    with torch.device('meta'):
        head = Sapiens2HeatmapHead(in_channels, 308, deconv_out_channels=deconv, conv_out_channels=conv)
    ours = {f'decode_head.{k}': list(v.shape) for k, v in head.state_dict().items()}
    assert ours == json.loads(path.read_text())
    assert list(ours) == list(json.loads(path.read_text()))  # same order as the official state dict
    if size == '0.4b':
        assert sum(p.numel() for p in head.parameters()) == PARAMS_0_4B


def test_layers_are_instance_norm_silu_without_state():
    head = tiny_head()
    assert [type(m) for m in head.deconv_layers] == [nn.ConvTranspose2d, nn.InstanceNorm2d, nn.SiLU] * 2
    assert [type(m) for m in head.conv_layers] == [nn.Conv2d, nn.InstanceNorm2d, nn.SiLU]
    assert head.deconv_layers[0].bias is None and head.conv_layers[0].bias is not None
    assert not hasattr(head, 'final_layer')
    assert sorted(head.state_dict()) == sorted([
        'deconv_layers.0.weight', 'deconv_layers.3.weight', 'conv_layers.0.weight', 'conv_layers.0.bias',
        'conv_pose.weight', 'conv_pose.bias'
    ])


def test_kaiming_fan_out_init_and_zero_bias():
    torch.manual_seed(0)
    head = tiny_head(in_channels=64, out_channels=256, deconv_out_channels=(128, ), deconv_kernel_sizes=(4, ),
                     conv_out_channels=(256, ), conv_kernel_sizes=(3, ))
    head.init_weights()
    conv = head.conv_layers[0]
    fan_out = conv.out_channels * 3 * 3
    assert conv.weight.std().item() == pytest.approx((2.0 / fan_out)**0.5, rel=0.05)
    assert torch.all(conv.bias == 0) and torch.all(head.conv_pose.bias == 0)
    deconv = head.deconv_layers[0].weight  # (in, out, k, k): torch's fan_out is in * k * k
    assert deconv.std().item() == pytest.approx((2.0 / (64 * 16))**0.5, rel=0.05)


def test_forward_upsamples_by_four():
    out = tiny_head()((torch.randn(2, 16, 4, 3), ))
    assert out.shape == (2, 4, 16, 12)


def test_bad_kernels_raise():
    with pytest.raises(ValueError, match='deconv kernel'):
        tiny_head(deconv_kernel_sizes=(5, 5))
    with pytest.raises(ValueError, match='odd'):
        tiny_head(conv_kernel_sizes=(2, ))


def _samples(batch: int, heatmaps: torch.Tensor, weights: torch.Tensor):
    samples = []
    for i in range(batch):
        s = PoseDataSample(metainfo=dict(flip_indices=[1, 0, 2, 3], input_size=(24, 32), input_center=np.zeros(2),
                                         input_scale=np.ones(2)))
        s.gt_fields = PixelData(heatmaps=heatmaps[i])
        s.gt_instance_labels = InstanceData(keypoint_weights=weights[i:i + 1])
        samples.append(s)
    return samples


def test_loss_is_weighted_mse_times_ten():
    torch.manual_seed(0)
    head = tiny_head()
    feats = (torch.randn(2, 16, 4, 3), )
    target = torch.rand(2, 4, 16, 12)
    weights = torch.tensor([[1., 0., 1., 1.], [0., 1., 1., 0.]])
    losses = head.loss(feats, _samples(2, target, weights))
    pred = head.forward(feats)
    expected = 10 * ((pred - target)**2 * weights[:, :, None, None]).mean()
    assert losses['loss_kpt'].item() == pytest.approx(expected.item(), rel=1e-5)
    assert 0 <= losses['acc_pose'].item() <= 1


def test_flip_test_averages_flipped_back_heatmaps_without_shift():
    torch.manual_seed(0)
    head = tiny_head().eval()
    feats, feats_flip = (torch.randn(1, 16, 4, 3), ), (torch.randn(1, 16, 4, 3), )
    samples = _samples(1, torch.zeros(1, 4, 16, 12), torch.ones(1, 4))
    cfg = dict(flip_test=True, flip_mode='heatmap', shift_heatmap=False, output_heatmaps=True)
    with torch.no_grad():
        _, fields = head.predict([feats, feats_flip], samples, test_cfg=cfg)
        expected = (head(feats) + head(feats_flip).flip(-1)[:, [1, 0, 2, 3]]) / 2
    assert torch.allclose(fields[0].heatmaps, expected[0], atol=1e-6)


def test_predict_decodes_peak_location():
    head = tiny_head().eval()
    heatmaps = torch.zeros(1, 4, 16, 12)
    for k, (x, y) in enumerate([(2, 3), (5, 7), (9, 4), (6, 12)]):
        heatmaps[0, k, y, x] = 1.0
    head.forward = lambda feats: heatmaps
    preds = head.predict((torch.zeros(1), ), _samples(1, heatmaps, torch.ones(1, 4)), test_cfg={})
    kpts = preds[0].keypoints[0]
    # UDP decode: heatmap px -> input px by input / (heatmap - 1) = (24/11, 32/15)
    expected = np.array([(2, 3), (5, 7), (9, 4), (6, 12)]) * np.array([24 / 11, 32 / 15])
    np.testing.assert_allclose(kpts, expected, atol=0.5)
