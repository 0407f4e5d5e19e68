"""A checkpoint from a Hub snapshot with a transformers config.json must fit the model it is loaded into."""
import shutil

import pytest
import torch
from torch import nn

from sapiens2.engine.checkpoint import load_model_weights
from sapiens2.hub.config_check import HubConfigMismatchError, check_model_fits_hub_config, compare_with_hub_config
from sapiens2.models import Sapiens2
from tests.hub.fake_hub import add_snapshot, sapiens2_config


def nano_backbone(img_size=(32, 32)) -> Sapiens2:
    return Sapiens2(arch='sapiens2_nano', img_size=img_size)


class SegLike(nn.Module):
    """Backbone + a head with ``num_classes``, as mmseg's segmentors."""

    def __init__(self, num_classes: int = 29, img_size=(32, 32)) -> None:
        super().__init__()
        self.backbone = nano_backbone(img_size)
        self.decode_head = nn.Conv2d(64, num_classes, 1)
        self.decode_head.num_classes = num_classes


SEG = dict(architecture='Sapiens2ForSemanticSegmentation', num_labels=29)


def test_a_fitting_config_passes():
    assert compare_with_hub_config(nano_backbone(), sapiens2_config()) == []
    assert compare_with_hub_config(SegLike(), sapiens2_config(**SEG)) == []
    assert compare_with_hub_config(SegLike(), dict(sapiens2_config(**SEG), patch_size=[16, 16])) == []


def test_arch_mismatches_are_listed():
    problems = compare_with_hub_config(nano_backbone(), sapiens2_config(hidden_size=1536, layers=40, heads=24))
    assert problems == ['hidden_size=1536 but the backbone has embed_dims=64',
                        'num_hidden_layers=40 but the backbone has num_layers=2',
                        'num_attention_heads=24 but the backbone has num_heads=2']
    assert compare_with_hub_config(nano_backbone(), sapiens2_config(patch_size=8)) == [
        'patch_size=8 but the backbone has patch_size=16']


def test_image_size_and_labels_are_checked_for_task_models_only():
    config = sapiens2_config(image_size=(1024, 768), **SEG)
    assert compare_with_hub_config(nano_backbone(), config) == []  # a backbone is fine-tuned at any size
    assert compare_with_hub_config(SegLike(), config) == ['image_size=[1024, 768] but the backbone has '
                                                          'img_size=[32, 32]']
    assert compare_with_hub_config(SegLike(), sapiens2_config(image_size=(224, 224), **SEG)) == []  # the default
    assert compare_with_hub_config(SegLike(num_classes=28), sapiens2_config(**SEG)) == [
        '29 labels (id2label/num_labels) but the head has num_classes=28']
    pose = dict(sapiens2_config(), architectures=['Sapiens2ForPoseEstimation'], num_labels=308)
    model = SegLike()
    model.head = model.decode_head
    model.head.out_channels = 17
    assert compare_with_hub_config(model, pose) == ['308 labels (id2label/num_labels) but the head has '
                                                    'out_channels=17']


def test_other_configs_are_ignored():
    assert compare_with_hub_config(nano_backbone(), dict(model_type='rtmdet', hidden_size=1)) == []
    assert compare_with_hub_config(nn.Linear(2, 2), sapiens2_config(hidden_size=1)) == []


def test_loading_from_a_snapshot_checks_its_config_first(tmp_path):
    source = SegLike()
    weights = {k: v for k, v in source.state_dict().items()}
    good = add_snapshot(str(tmp_path / 'good'), 'org/seg', {'model.safetensors': weights,
                                                           'config.json': sapiens2_config(**SEG)})
    target = SegLike()
    load_model_weights(target, f'{good}/model.safetensors')
    assert torch.equal(target.decode_head.weight, source.decode_head.weight)

    bad = add_snapshot(str(tmp_path / 'bad'), 'org/seg', {'model.safetensors': weights,
                                                         'config.json': sapiens2_config(image_size=(64, 48), **SEG)})
    with pytest.raises(HubConfigMismatchError) as err:
        load_model_weights(SegLike(), f'{bad}/model.safetensors')
    assert 'image_size=[64, 48] but the backbone has img_size=[32, 32]' in str(err.value)
    assert f'{bad}/config.json' in str(err.value) and 'copy the file out of the Hub cache' in str(err.value)

    outside = str(tmp_path / 'model.safetensors')
    shutil.copyfile(f'{bad}/model.safetensors', outside)
    load_model_weights(SegLike(), outside)  # a file outside the Hub cache has no config to check
    broken = add_snapshot(str(tmp_path / 'broken'), 'org/seg', {'model.safetensors': weights,
                                                               'config.json': b'{not json'})
    with pytest.raises(HubConfigMismatchError, match='not readable JSON'):
        check_model_fits_hub_config(SegLike(), f'{broken}/model.safetensors')
