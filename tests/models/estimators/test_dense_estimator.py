import pytest
import torch
from mmengine.structures import PixelData

from sapiens2.models.estimators import DenseEstimator
from sapiens2.models.heads import DensePredictorHead
from sapiens2.structures import DenseDataSample


class _Head(DensePredictorHead):
    predictor, num_outputs = 'conv_out', 3


def _estimator(**kwargs):
    return DenseEstimator(
        backbone=dict(type='Sapiens2', arch='sapiens2_nano', img_size=(64, 48), out_type='featmap'),
        decode_head=dict(type=_Head, in_channels=64, upsample_channels=(8, 8, 8, 8), conv_out_channels=(8, ),
                         loss_decode=dict(type='MaskedL1Loss')),
        **kwargs)


def _batch():
    sample = DenseDataSample(metainfo=dict(letterbox_pad=(0, 0, 0, 0), ori_shape=(32, 24)))
    sample.gt_dense = PixelData(data=torch.rand(3, 64, 48), mask=torch.ones(1, 64, 48, dtype=torch.bool))
    return dict(inputs=[torch.randint(0, 255, (3, 64, 48), dtype=torch.uint8)], data_samples=[sample])


def test_checkpoint_keys_are_backbone_and_decode_head():
    prefixes = {key.split('.')[0] for key in _estimator().state_dict()}
    assert prefixes == {'backbone', 'decode_head'}


@pytest.mark.parametrize('use_checkpoint', [False, True])
def test_loss_mode_backpropagates(use_checkpoint):
    model = _estimator(use_checkpoint=use_checkpoint)
    model.train()
    data = model.data_preprocessor(_batch(), True)
    losses = model(**data, mode='loss')
    losses['loss_l1'].backward()
    assert any(p.grad is not None for p in model.backbone.parameters())


def test_predict_and_tensor_modes():
    model = _estimator().eval()
    data = model.data_preprocessor(_batch(), False)
    with torch.no_grad():
        (sample, ) = model(**data, mode='predict')
        out = model(data['inputs'], mode='tensor')
    assert sample.pred_dense.data.shape == (3, 32, 24)
    assert out.shape == (1, 3, 64, 48)
    with pytest.raises(ValueError, match='Invalid mode'):
        model(data['inputs'], mode='bogus')


def test_default_preprocessor_is_spec_mean_std_bgr_to_rgb():
    pre = _estimator().data_preprocessor
    torch.testing.assert_close(pre.mean.flatten(), torch.tensor([123.675, 116.28, 103.53]))
    assert pre._channel_conversion
