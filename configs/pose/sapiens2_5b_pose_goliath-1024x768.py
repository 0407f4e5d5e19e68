# Sapiens2-5B, 308-keypoint top-down pose at 1024x768: the official recipe.
_base_ = ['./_base_/pose_goliath-1024x768.py', '../_base_/models/sapiens2_5b.py', '../_base_/schedules/linear_20k.py',
          '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

model = dict(backbone=_base_.backbone, head=dict(in_channels=2432))
optim_wrapper = dict(optimizer=dict(lr=1e-4), paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=2)
