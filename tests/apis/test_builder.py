"""init_model: the one model builder; the dense-head widths of a Hub checkpoint's config.json win."""
import pytest
import torch

from sapiens2.apis.builder import init_model
from sapiens2.engine.checkpoint import save_weights
from tests.hub.fake_hub import add_snapshot

MATTING = 'projects/matting/configs/sapiens2_nano_matting_synthhumans-128x96.py'
RELEASED = dict(upsample_channels=[24, 8], conv_out_channels=[12, 6], conv_kernel_sizes=[3, 1])


def hub_config(model) -> dict:
    """The transformers ``config.json`` of ``model`` (what a released repository holds)."""
    from sapiens2.interop.transformers_config import describe_model
    hf_class, fields = describe_model(model)
    return dict(fields, model_type='sapiens2', architectures=[hf_class])


def released_snapshot(tmp_path) -> str:
    """A Hub snapshot of a matting model whose head widths differ from the nano config's."""
    options = {f'model.decode_head.{key}': value for key, value in RELEASED.items()}
    with pytest.warns(UserWarning, match='random weights'):
        released = init_model(MATTING, device='cpu', cfg_options=options)
    weights = str(tmp_path / 'weights.safetensors')
    save_weights(released.state_dict(), weights)
    with open(weights, 'rb') as f:
        folder = add_snapshot(str(tmp_path / 'hub'), 'org/matting', {'model.safetensors': f.read(),
                                                                    'config.json': hub_config(released)})
    return f'{folder}/model.safetensors'


def test_hub_config_head_widths_override_the_config(tmp_path):
    checkpoint = released_snapshot(tmp_path)
    with pytest.warns(UserWarning, match=r'head widths from .*config.json override the config'):
        model = init_model(MATTING, checkpoint, device='cpu')
    head = model.decode_head
    assert [block[0].out_channels // 4 for block in head.upsample_blocks] == RELEASED['upsample_channels']
    assert {key: list(model.cfg.model.decode_head[key]) for key in RELEASED} == RELEASED
    from safetensors.torch import load_file
    assert torch.equal(load_file(checkpoint)['decode_head.conv_matting.weight'], head.conv_matting.weight)


def test_a_trunk_head_with_other_widths_is_a_hub_config_mismatch():
    from sapiens2.hub.config_check import compare_with_hub_config
    options = {f'model.decode_head.{key}': value for key, value in RELEASED.items()}
    with pytest.warns(UserWarning, match='random weights'):
        model = init_model(MATTING, device='cpu')
        released = init_model(MATTING, device='cpu', cfg_options=options)
    assert compare_with_hub_config(released, hub_config(released)) == []
    problems = compare_with_hub_config(model, hub_config(released))
    assert problems == [f'head widths {RELEASED} (head_config) but the head has '
                        "{'upsample_channels': [32, 16], 'conv_out_channels': [16], 'conv_kernel_sizes': [3]}"]
