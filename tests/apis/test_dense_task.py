"""Dense inference maps network outputs back to the original image exactly (letterbox removed)."""
import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.model import BaseModel
from torch import nn

from sapiens2.apis import DenseInferenceTask
from sapiens2.structures.letterbox import letterbox


class EchoModel(BaseModel):
    """Returns its (un-normalised) input: the ideal dense model for checking the geometry."""

    def __init__(self):
        super().__init__(data_preprocessor=dict(type='ImgDataPreprocessor', mean=[0, 0, 0], std=[1, 1, 1]))
        self.gain = nn.Parameter(torch.ones(()))

    def forward(self, inputs, data_samples=None, mode='tensor'):
        return inputs * self.gain


class EchoTask(DenseInferenceTask):
    name = 'echo'

    def decode(self, dense, extras):
        return dict(image=dense.permute(1, 2, 0).numpy())


def make_task(resize='letterbox'):
    return EchoTask(EchoModel().eval(), Config(dict(model=dict())), resize=resize, input_size=(64, 48))


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
    task.model.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    task.predict([image])
    expected = letterbox(image, (64, 48))[0].transpose(2, 0, 1)
    np.testing.assert_array_equal(seen[0][0].numpy(), expected.astype(np.float32))


def test_stretch_resize_and_bad_options():
    image = np.zeros((20, 40, 3), np.uint8)
    assert make_task('stretch').predict([image])[0]['image'].shape == (20, 40, 3)
    with pytest.raises(ValueError, match='resize'):
        make_task('crop')
    with pytest.raises(ValueError, match='dtype'):
        EchoTask(EchoModel(), Config(dict(model=dict())), dtype='int8', input_size=(64, 48))
