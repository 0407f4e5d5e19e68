# Sapiens2-0.8B surface normals at 1024x768: 10k iterations, layer decay 0.85, clip 4.0, 12 per GPU x 8.
_base_ = ['./sapiens2_0.4b_normal_render_people-1024x768.py']

pretrained_checkpoint = 'pretrain-0.8b'
model = dict(
    backbone=dict(arch='sapiens2_0.8b', init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(in_channels=1280))

optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.85), clip_grad=dict(max_norm=4.0))
max_iters = 10000
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=500, end=max_iters),
]
train_cfg = dict(max_iters=max_iters)
train_dataloader = dict(batch_size=12)
