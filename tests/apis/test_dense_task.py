"""Dense inference goes through the config's test pipeline and the head's predict, which maps outputs back to the
original image exactly (letterbox removed): checked with a model that echoes its input."""
import numpy as np
import pytest
import torch
from mmengine.config import Config
from torch import nn

from sapiens2.apis import DenseInferenceTask
from sapiens2.models.heads.dense_trunk_head import DenseTrunkHead
from sapiens2.registry import MODELS
from sapiens2.structures.letterbox import letterbox


@MODELS.register_module(force=True)
class EchoBackbone(nn.Module):
    """Returns the (un-normalised) image as its only feature map."""

    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return [x * self.gain]


@MODELS.register_module(force=True)
class EchoHead(DenseTrunkHead):
    """A trunk without layers: the ideal dense model for checking the geometry."""

    def __init__(self):
        super().__init__(in_channels=3, upsample_channels=(), conv_out_channels=())

    def forward(self, x):
        return x


class EchoTask(DenseInferenceTask):
    name = 'echo'

    def decode(self, sample):
        return dict(image=sample.pred_dense.data.permute(1, 2, 0).numpy())


def echo_config(input_size=(64, 48)) -> Config:
    return Config(dict(
        default_scope='sapiens2',
        model=dict(type='DenseEstimator', backbone=dict(type='EchoBackbone'), decode_head=dict(type='EchoHead'),
                   data_preprocessor=dict(type='ImgDataPreprocessor', mean=[0, 0, 0], std=[1, 1, 1])),
        test_dataloader=dict(dataset=dict(pipeline=[
            dict(type='LoadImageFromFile'),
            dict(type='Letterbox', size=input_size, test_mode=True),
            dict(type='PackDenseInputs', target_key='gt_normal'),
        ]))))


def make_task(dtype='fp32'):
    cfg = echo_config()
    model = MODELS.build(cfg.model).eval()
    return EchoTask(model, cfg, dtype=dtype)


def test_unletterbox_is_exact_when_no_resize_is_needed():
    image = np.random.default_rng(0).integers(0, 255, (64, 32, 3), dtype=np.uint8)  # pads 8 px left and right
    result = make_task().predict([image])[0]
    np.testing.assert_array_equal(result['image'], image.astype(np.float32))


def test_mixed_sizes_in_one_batch_come_back_at_their_own_size():
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 255, (100, 50, 3), dtype=np.uint8), rng.integers(0, 255, (30, 90, 3), dtype=np.uint8)]
    results = make_task().predict(images)
    for image, result in zip(images, results):
        assert result['image'].shape == image.shape
        # the round trip through the 64x48 input is a blur, not a shift: the mean colour survives
        np.testing.assert_allclose(result['image'].mean((0, 1)), image.mean((0, 1)), atol=4)


def test_the_network_sees_the_letterboxed_image():
    image = np.random.default_rng(2).integers(0, 255, (100, 50, 3), dtype=np.uint8)
    task = make_task()
    seen = []
    task.model.backbone.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    task.predict([image])
    expected = letterbox(image, (64, 48))[0].transpose(2, 0, 1)
    np.testing.assert_array_equal(seen[0][0].numpy(), expected.astype(np.float32))


def test_bad_dtype():
    with pytest.raises(ValueError, match='dtype'):
        make_task(dtype='int8')
