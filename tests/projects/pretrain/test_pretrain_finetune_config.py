"""Pretraining to fine-tuning: the pose config that starts from a pretraining checkpoint loads the EMA teacher's
backbone strictly, from the pretraining work dir's checkpoint or from an exported backbone."""
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

from sapiens2.engine.checkpoint import CheckpointMismatchError
from sapiens2.registry import MODELS
from sapiens2_pretrain import export_backbone

FINETUNE = 'projects/pretrain/configs/finetune/sapiens2_tiny_pose_synthhumans-128x96_pretrained.py'
PRETRAIN = 'projects/pretrain/configs/sapiens2_tiny_pretrain_synthhumans-128x96.py'


@pytest.fixture(scope='module')
def pretrainer():
    """The tiny pretraining config's model, its teacher made to differ from the student."""
    cfg = Config.fromfile(PRETRAIN)
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = MODELS.build(cfg.model)
    model.init_weights()
    with torch.no_grad():
        for p in model.teacher['backbone'].parameters():
            p.add_(0.5)
    return model


def _pose_model(checkpoint: str, prefix):
    from mmpose.registry import MODELS as POSE_MODELS
    cfg = Config.fromfile(FINETUNE)
    cfg.model.backbone.init_cfg.update(checkpoint=checkpoint, prefix=prefix)
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = POSE_MODELS.build(cfg.model)
        model.init_weights()
    return model


def _assert_teacher_loaded(pose, pretrainer):
    teacher = pretrainer.teacher['backbone'].state_dict()
    loaded = pose.backbone.state_dict()
    assert set(loaded) == set(teacher)
    for key, value in teacher.items():
        torch.testing.assert_close(loaded[key], value, rtol=0, atol=0, msg=key)


def test_config_matches_the_pretraining_backbone():
    finetune, pretrain = Config.fromfile(FINETUNE), Config.fromfile(PRETRAIN)
    for key in ('arch', 'img_size', 'patch_size'):
        assert finetune.model.backbone[key] == pretrain.model.backbone[key], key
    assert finetune.model.backbone.init_cfg.checkpoint.startswith(f'work_dirs/{PRETRAIN.split("/")[-1][:-3]}/')


def test_loads_the_teacher_from_a_pretraining_checkpoint(pretrainer, tmp_path):
    path = str(tmp_path / 'iter_300.pth')
    torch.save(dict(state_dict=pretrainer.state_dict(), meta=dict(iter=300)), path)  # a runner checkpoint's layout
    _assert_teacher_loaded(_pose_model(path, 'teacher.backbone.'), pretrainer)


def test_loads_an_exported_teacher_backbone(pretrainer, tmp_path):
    path = str(tmp_path / 'teacher_backbone.safetensors')
    export_backbone(pretrainer.state_dict(), path, source='teacher')
    _assert_teacher_loaded(_pose_model(path, None), pretrainer)


def test_a_backbone_of_another_size_is_refused(tiny_pretrainer, tmp_path):
    path = str(tmp_path / 'nano.pth')
    torch.save(dict(state_dict=tiny_pretrainer().state_dict()), path)  # sapiens2_nano: 64 dims
    with pytest.raises(CheckpointMismatchError):
        _pose_model(path, 'teacher.backbone.')
