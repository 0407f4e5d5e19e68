# Sapiens2-5B body-part segmentation at 1024x768: 50k iterations, bf16, 2 per GPU x 8; validation every 10k,
# checkpoints every 2k, validation batch 1.
_base_ = ['./_base_/seg_bodypart29-1024x768.py', '../_base_/models/sapiens2_5b.py',
          '../_base_/schedules/linear_50k.py', '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=2432))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
train_cfg = dict(val_interval=10000)
default_hooks = dict(checkpoint=dict(interval=2000))
train_dataloader = dict(batch_size=2, num_workers=4)
val_dataloader = dict(batch_size=1)
test_dataloader = dict(batch_size=1)
