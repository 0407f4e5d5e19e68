"""The matting configs build models whose state dicts are the official key layout of transformers'
``Sapiens2ForImageMatting`` (tests/data/transformers, head widths assumed equal to the normal heads'), for every size,
and load such state dicts strictly."""
import json

import pytest
import torch
from mmengine.config import Config

from sapiens2.engine.checkpoint import load_model_weights
from sapiens2.registry import MODELS
from tests import DATA_DIR

SIZES = ('0.4b', '0.8b', '1b', '5b')
# transformers recomputes the RoPE periods and does not save them; our backbone keeps them as a (bf16) buffer, as the
# official backbone does.
OUR_ONLY = {'backbone.rope_embed.periods'}


def manifest(size: str) -> dict:
    path = DATA_DIR / 'transformers' / f'sapiens2_{size}_matting.json'
    if not path.is_file():
        raise FileNotFoundError(f'{path} is missing; it is part of the repository (see tests/data/README.md)')
    return json.loads(path.read_text())


def build(size: str):
    cfg = Config.fromfile(f'projects/matting/configs/sapiens2_{size}_matting_humans-1024x768.py').model
    cfg.backbone.init_cfg = None
    with torch.device('meta'):
        return MODELS.build(cfg)


@pytest.mark.parametrize('size', SIZES)
def test_keys_and_shapes_match_the_transformers_layout(size):
    model = build(size)
    actual = {k: list(v.shape) for k, v in model.state_dict().items()}
    expected = manifest(size)
    assert set(actual) - set(expected) == OUR_ONLY
    assert set(expected) - set(actual) == set()
    assert {k: v for k, v in actual.items() if k not in OUR_ONLY} == expected
    head = {k for k in expected if k.startswith('decode_head.')}
    assert head >= {'decode_head.input_conv.0.weight', 'decode_head.upsample_blocks.3.0.bias',
                    'decode_head.conv_layers.6.weight', 'decode_head.conv_matting.bias'}
    assert expected['decode_head.conv_matting.weight'][0] == 4


@pytest.mark.parametrize('size', ['0.4b', '1b'])
def test_the_layout_loads_strictly(size):
    model = build(size)
    state = {k: torch.empty(v, device='meta') for k, v in manifest(size).items()}
    state['backbone.rope_embed.periods'] = torch.empty(model.backbone.rope_embed.periods.shape, device='meta',
                                                       dtype=torch.bfloat16)
    model.load_state_dict(state, strict=True, assign=True)
    missing = dict(state)
    missing.pop('decode_head.conv_matting.weight')
    with pytest.raises(Exception, match='conv_matting.weight'):
        load_model_weights(build(size), missing, strict=True)
