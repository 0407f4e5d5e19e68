# Sapiens2-5B, 308-keypoint top-down pose at 1024x768: the official recipe.
_base_ = ['./sapiens2_0.4b_pose_goliath-1024x768.py', '../_base_/strategies/fsdp.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

max_iters = 20000
pretrained = 'pretrain-5b'

train_cfg = dict(max_iters=max_iters)
optim_wrapper = dict(optimizer=dict(lr=1e-4), paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=500, end=max_iters),
]
model = dict(
    backbone=dict(arch='sapiens2_5b', init_cfg=dict(checkpoint=pretrained)),
    head=dict(in_channels=2432, deconv_out_channels=(1024, 768), conv_out_channels=(512, 512, 256)))
train_dataloader = dict(batch_size=2)
