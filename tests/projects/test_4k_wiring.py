"""The 4K configs: the 1B-4K tokenizer backbone under a five-block normal head and a five-deconvolution seg head
(2048x1536 outputs), and the same wiring at tiny scale (nano backbone with the window tokenizer, output at half the
input size)."""
import json

import torch
from mmengine.config import Config
from mmengine.structures import PixelData

from sapiens2.registry import MODELS
from sapiens2.structures import DenseDataSample
from tests import official_data

NORMAL_CONFIG = 'projects/normal/configs/sapiens2_1b-4k_normal_render_people-4096x3072.py'
SEG_CONFIG = 'configs/seg/sapiens2_1b-4k_seg_bodypart29-4096x3072.py'
BACKBONE_LAYOUT = official_data('state_dicts', 'sapiens2_1b_4k_tokenizer_4096x3072.json')


def _check_4k_model(model, out_channels):
    with torch.device('meta'):
        out = model.decode_head(torch.empty(1, 1536, 64, 48))
    expected = {f'backbone.{k}': v for k, v in json.loads(BACKBONE_LAYOUT.read_text()).items()}
    actual = {k: list(v.shape) for k, v in model.state_dict().items() if k.startswith('backbone.')}
    assert actual == expected
    assert out.shape == (1, out_channels, 2048, 1536)


def test_4k_normal_config_uses_the_4k_backbone_and_outputs_2048x1536():
    import sapiens2_normal  # noqa: F401
    cfg = Config.fromfile(NORMAL_CONFIG).model
    cfg.backbone.init_cfg = None
    with torch.device('meta'):
        model = MODELS.build(cfg)
    _check_4k_model(model, 3)


def test_4k_seg_config_uses_the_4k_backbone_and_outputs_2048x1536():
    from mmengine.registry import DefaultScope
    from mmseg.registry import MODELS as SEG_MODELS
    cfg = Config.fromfile(SEG_CONFIG)
    assert cfg.train_pipeline[-2].scale == (3072, 4096)
    cfg.model.backbone.init_cfg = None
    with torch.device('meta'), DefaultScope.overwrite_default_scope('mmseg'):
        model = SEG_MODELS.build(cfg.model)
    _check_4k_model(model, 29)


def _tiny_4k_estimator():
    import sapiens2_normal  # noqa: F401
    return MODELS.build(
        dict(type='DenseEstimator',
             backbone=dict(type='Sapiens2', arch='sapiens2_nano', img_size=(256, 192), use_tokenizer=True,
                           out_type='featmap'),
             decode_head=dict(type='NormalHead', in_channels=64, upsample_channels=(16, 16, 8, 8, 8),
                              conv_out_channels=(8, ), conv_kernel_sizes=(3, ),
                              loss_decode=[dict(type='NormalCosineSimilarityLoss'), dict(type='MaskedL1Loss')])))


def _batch():
    sample = DenseDataSample(metainfo=dict(letterbox_pad=(0, 0, 28, 28), img_shape=(256, 192), ori_shape=(200, 192)))
    normals = torch.nn.functional.normalize(torch.randn(3, 256, 192), dim=0)
    sample.gt_dense = PixelData(data=normals, mask=torch.ones(1, 256, 192, dtype=torch.bool))
    return dict(inputs=[torch.randint(0, 255, (3, 256, 192), dtype=torch.uint8)], data_samples=[sample])


def test_tiny_4k_wiring_trains_and_predicts_at_the_original_size():
    model = _tiny_4k_estimator()
    data = model.data_preprocessor(_batch(), True)
    assert model(data['inputs'], mode='tensor').shape == (1, 3, 128, 96)  # half the input, as 2048x1536 at 4K
    losses = model(**data, mode='loss')
    sum(losses.values()).backward()
    assert all(torch.isfinite(v) for v in losses.values())
    model.eval()
    with torch.no_grad():
        (sample, ) = model(**model.data_preprocessor(_batch(), False), mode='predict')
    assert sample.pred_dense.data.shape == (3, 200, 192)
