# Fine-tuning from this project's pretraining: the tiny SynthHumans pose recipe with the pretrained backbone's arch
# (sapiens2_tiny: 128 dims, 4 blocks, patch 8 at 128x96) and its weights loaded strictly from the EMA teacher of a
# pretraining checkpoint. Pretrain, then fine-tune (same budget as from scratch: drop init_cfg for the baseline):
#   python tools/train.py projects/pretrain/configs/sapiens2_tiny_pretrain_synthhumans-128x96.py
#   python tools/train.py projects/pretrain/configs/finetune/sapiens2_tiny_pose_synthhumans-128x96_pretrained.py
# Another checkpoint: --cfg-options model.backbone.init_cfg.checkpoint=PATH; a backbone exported by
# projects/pretrain/tools/export_backbone.py has bare keys: add model.backbone.init_cfg.prefix=None.
_base_ = ['sapiens2::pose/sapiens2_nano_pose_synthhumans-128x96.py']

pretrained_checkpoint = 'work_dirs/sapiens2_tiny_pretrain_synthhumans-128x96/iter_300.pth'

model = dict(
    backbone=dict(
        arch='sapiens2_tiny',
        init_cfg=dict(
            _delete_=True, type='Pretrained', checkpoint=pretrained_checkpoint, prefix='teacher.backbone.')),
    head=dict(in_channels=128))
