# Sapiens2-5B body-part segmentation at 1024x768: 50k iterations, bf16, 2 per GPU x 8; validation every 10k,
# checkpoints every 2k, validation batch 1.
_base_ = ['./sapiens2_0.4b_seg_bodypart29-1024x768.py', '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

pretrained_checkpoint = 'pretrain-5b'
model = dict(
    backbone=dict(arch='sapiens2_5b', init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(in_channels=2432))

optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))

max_iters = 50000
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=500, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=10000)
default_hooks = dict(checkpoint=dict(interval=2000))
train_dataloader = dict(batch_size=2, num_workers=4)
val_dataloader = dict(batch_size=1)
test_dataloader = dict(batch_size=1)
