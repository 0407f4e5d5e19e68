# Sapiens2-1B, 308-keypoint top-down pose at 1024x768: the official recipe.
_base_ = ['./_base_/pose_goliath-1024x768.py', '../_base_/models/sapiens2_1b.py', '../_base_/schedules/linear_20k.py',
          '../_base_/strategies/fsdp.py', './_base_/pose_1b.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

model = dict(backbone=_base_.backbone, head=_base_.pose_1b_head)
optim_wrapper = _base_.pose_1b_optim
train_dataloader = dict(batch_size=7)
