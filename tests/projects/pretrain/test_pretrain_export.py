"""Exported pretrain backbones use the official bare-key layout and load strictly into task configs."""
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

from sapiens2.engine.checkpoint import load_weights
from sapiens2.models import Sapiens2
from sapiens2_pretrain import export_backbone

POSE_CONFIG = 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'


@pytest.mark.parametrize('source', ['student', 'teacher'])
def test_export_bare_keys_match_backbone(tiny_pretrainer, tmp_path, source):
    model = tiny_pretrainer()
    with torch.no_grad():
        model.teacher['backbone'].cls_token.add_(1.0)  # make teacher and student differ
    out = tmp_path / 'backbone.safetensors'
    export_backbone(model.state_dict(), str(out), source=source)
    saved = load_weights(str(out))
    reference = Sapiens2(arch='sapiens2_nano', img_size=(128, 96)).state_dict()
    assert set(saved) == set(reference)
    assert saved['rope_embed.periods'].dtype == torch.bfloat16  # as in the official pretrain files
    expected = model.backbone if source == 'student' else model.teacher['backbone']
    torch.testing.assert_close(saved['cls_token'], expected.cls_token.detach(), rtol=0, atol=0)


def test_export_rejects_unknown_source_and_foreign_checkpoints(tmp_path):
    with pytest.raises(ValueError, match='source'):
        export_backbone({'backbone.x': torch.zeros(1)}, str(tmp_path / 'a.safetensors'), source='ema')
    with pytest.raises(KeyError, match='not a Sapiens2Pretrainer'):
        export_backbone({'head.x': torch.zeros(1)}, str(tmp_path / 'a.safetensors'))


def test_exported_backbone_loads_strictly_into_pose_config(tiny_pretrainer, tmp_path):
    model = tiny_pretrainer()
    out = str(tmp_path / 'sapiens2_nano_pretrain.safetensors')
    export_backbone(model.state_dict(), out)
    cfg = Config.fromfile(POSE_CONFIG)
    cfg.model.backbone.init_cfg = dict(type='Pretrained', checkpoint=out)
    cfg.model.backbone.patch_size = model.backbone.patch_size  # the tiny pose recipe uses 8x8 patches
    from mmpose.registry import MODELS as POSE_MODELS
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        pose_model = POSE_MODELS.build(cfg.model)
        pose_model.init_weights()
    for key, value in model.backbone.state_dict().items():
        torch.testing.assert_close(pose_model.backbone.state_dict()[key], value, rtol=0, atol=0)
