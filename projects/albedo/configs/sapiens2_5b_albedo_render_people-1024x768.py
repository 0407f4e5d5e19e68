# Sapiens2-5B albedo at 1024x768: wider upsampling, lr 5e-4 (unlike 5b normal/pointmap), 40k iterations,
# layer decay 0.94, clip 4.0, validation only at the end, 3 per GPU x 8.
_base_ = ['./sapiens2_0.4b_albedo_render_people-1024x768.py']

pretrained_checkpoint = 'pretrain-5b'
model = dict(
    backbone=dict(arch='sapiens2_5b', init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(in_channels=2432, upsample_channels=(1536, 768, 512, 256)))

optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
max_iters = 40000
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=500, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=40000)
train_dataloader = dict(batch_size=3)
