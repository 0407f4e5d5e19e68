# Sapiens2-1B, 308-keypoint top-down pose at 1024x768: the official recipe.
_base_ = ['./_base_/pose_goliath-1024x768.py', '../_base_/models/sapiens2_1b.py', '../_base_/schedules/linear_20k.py',
          '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

model = dict(backbone=_base_.backbone,
             head=dict(in_channels=1536, deconv_out_channels=(1536, 1024), conv_out_channels=(768, 512, 256)))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.9), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=7)
