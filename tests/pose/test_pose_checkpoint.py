"""Official pose checkpoints (``backbone.*`` / ``decode_head.*``) load strictly into the mmpose estimator."""
import json
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmpose.registry import MODELS

from sapiens2.engine.checkpoint import CheckpointMismatchError, load_model_weights, save_weights
from tests import official_data

ROOT = Path(__file__).resolve().parents[2]
FULL = official_data('state_dicts', 'tasks', 'sapiens2_0.4b_keypoints308_shutterstock_goliath_3po-1024x768.full.json')
TINY = ROOT / 'configs' / 'pose' / 'sapiens2_nano_pose_synthhumans-128x96.py'


def official_names(model: torch.nn.Module) -> dict:
    return {(f'decode_{k}' if k.startswith('head.') else k): list(v.shape) for k, v in model.state_dict().items()}


def build(config: Path, device: str = 'cpu') -> torch.nn.Module:
    init_default_scope('mmpose')
    cfg = Config.fromfile(str(config))
    cfg.model.backbone.init_cfg = None
    with torch.device(device):
        return MODELS.build(cfg.model)


def test_0_4b_estimator_has_official_layout_and_loads_strictly():
    layout = json.loads(FULL.read_text())
    model = build(ROOT / 'configs' / 'pose' / 'sapiens2_0.4b_pose_goliath-1024x768.py', device='meta')
    assert official_names(model) == layout
    official = {k: torch.empty(shape, device='meta') for k, shape in layout.items()}
    load_model_weights(model, official, strict=True)
    official.pop('decode_head.conv_pose.bias')
    with pytest.raises(CheckpointMismatchError, match='conv_pose.bias'):
        load_model_weights(model, official, strict=True)


def test_tiny_official_style_checkpoint_round_trip(tmp_path):
    torch.manual_seed(0)
    src = build(TINY).eval()
    official = {(f'decode_{k}' if k.startswith('head.') else k): v for k, v in src.state_dict().items()}
    path = tmp_path / 'pose.safetensors'
    save_weights(official, str(path))
    dst = build(TINY).eval()
    load_model_weights(dst, str(path), strict=True)
    x = torch.randn(1, 3, 128, 96)
    with torch.no_grad():
        assert torch.equal(src._forward(x), dst._forward(x))
