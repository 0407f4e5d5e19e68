# Sapiens2-0.8B, 308-keypoint top-down pose at 1024x768: the official recipe.
_base_ = ['./sapiens2_0.4b_pose_goliath-1024x768.py']

max_iters = 10000
pretrained = 'pretrain-0.8b'

train_cfg = dict(max_iters=max_iters)
optim_wrapper = dict(optimizer=dict(lr=5e-4), paramwise_cfg=dict(layer_decay_rate=0.85), clip_grad=dict(max_norm=4.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=500, end=max_iters),
]
model = dict(
    backbone=dict(arch='sapiens2_0.8b', init_cfg=dict(checkpoint=pretrained)),
    head=dict(in_channels=1280, deconv_out_channels=(1024, 768), conv_out_channels=(512, 512, 256)))
train_dataloader = dict(batch_size=12)
