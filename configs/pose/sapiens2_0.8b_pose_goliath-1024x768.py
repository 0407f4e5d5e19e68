# Sapiens2-0.8B, 308-keypoint top-down pose at 1024x768: the official recipe.
_base_ = ['./_base_/pose_goliath-1024x768.py', '../_base_/models/sapiens2_0.8b.py',
          '../_base_/schedules/linear_10k.py']

model = dict(backbone=_base_.backbone, head=dict(in_channels=1280))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.85), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=12)
