import pytest
import torch
from mmengine.structures import PixelData
from torch import nn

from sapiens2.models.heads.dense_trunk_head import DenseTrunkHead
from sapiens2.structures import DenseDataSample


class _ThreeChannelHead(DenseTrunkHead):

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv_out = nn.Conv2d(self.trunk_channels, 3, 1)

    def forward(self, x):
        return self.conv_out(self.forward_trunk(x))

    def loss_by_feat(self, outputs, data_samples):
        return self.apply_losses(outputs, *self.stack_targets(data_samples))


def _head(norm='IN', **kwargs):
    return _ThreeChannelHead(in_channels=8, upsample_channels=(8, 4, 4, 4), conv_out_channels=(4, 4), norm=norm,
                             **kwargs)


def test_trunk_upsamples_x16_and_keys_follow_the_official_layout():
    head = _head()
    assert head(torch.randn(2, 8, 3, 2)).shape == (2, 3, 48, 32)
    keys = set(head.state_dict())
    assert {'input_conv.0.weight', 'upsample_blocks.3.0.bias', 'conv_layers.0.weight', 'conv_layers.3.weight'} <= keys
    assert not any('norm' in k for k in keys)  # InstanceNorm2d has no state


def test_rmsnorm_trunk_adds_norm_weights_at_the_official_indices():
    keys = set(_head(norm='RMSNorm2d').state_dict())
    assert {'input_conv.1.norm.weight', 'upsample_blocks.0.2.norm.weight', 'conv_layers.1.norm.weight',
            'conv_layers.4.norm.weight'} <= keys


def test_unknown_norm_and_kernel_mismatch_are_rejected():
    with pytest.raises(ValueError, match='Unknown dense head norm'):
        _head(norm='BN')
    with pytest.raises(ValueError, match='same length'):
        _head(conv_kernel_sizes=(3, ))


def test_init_weights_zeroes_biases():
    head = _head()
    head.init_weights()
    assert all(m.bias.abs().sum() == 0 for m in head.modules() if isinstance(m, nn.Conv2d))


def test_predict_removes_letterbox_padding_and_resizes_to_original():
    head = _head()
    sample = DenseDataSample(metainfo=dict(letterbox_pad=(4, 4, 0, 0), ori_shape=(24, 12)))
    (result, ) = head.predict(torch.randn(1, 8, 3, 2), [sample])
    assert result['pred_dense'].data.shape == (3, 24, 12)


def test_losses_with_the_same_name_are_summed():
    loss = dict(type='MaskedL1Loss', loss_weight=1.0)
    head = _head(loss_decode=[loss, loss])
    sample = DenseDataSample()
    sample.gt_dense = PixelData(data=torch.zeros(3, 48, 32), mask=torch.ones(1, 48, 32, dtype=torch.bool))
    x = torch.randn(1, 8, 3, 2)
    losses = head.loss(x, [sample])
    single = head.losses[0](head(x), torch.zeros(1, 3, 48, 32), torch.ones(1, 1, 48, 32, dtype=torch.bool))
    assert list(losses) == ['loss_l1']
    torch.testing.assert_close(losses['loss_l1'], 2 * single)
