# Sapiens2-1B human parsing on LIP at 1024x768: sapiens2_0.4b_seg_lip-1024x768.py (data layout and classes there)
# with the 1b backbone, head, layer decay, clip and batch (8 GPUs x 8) of sapiens2_1b_seg_bodypart29-1024x768.py
# (tests/seg/test_public_seg_configs.py checks that they agree); as many images as mmseg's LIP schedule: 40k iterations.
_base_ = ['./sapiens2_0.4b_seg_lip-1024x768.py', '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

pretrained_checkpoint = 'pretrain-1b'
max_iters = 40000
warmup_iters = 500
model = dict(
    backbone=dict(arch='sapiens2_1b', init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(in_channels=1536))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.9), clip_grad=dict(max_norm=4.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters)
train_dataloader = dict(batch_size=8, num_workers=4)
