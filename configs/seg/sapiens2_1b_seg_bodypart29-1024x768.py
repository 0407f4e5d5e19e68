# Sapiens2-1B body-part segmentation at 1024x768: 20k iterations, bf16, 8 per GPU x 8.
_base_ = ['./_base_/seg_bodypart29-1024x768.py', '../_base_/models/sapiens2_1b.py',
          '../_base_/schedules/linear_20k.py', '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=1536))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.9), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=8, num_workers=4)
