# Sapiens2-0.8B body-part segmentation at 1024x768: 30k iterations, fp32 (official DDP fp32), 5 per GPU x 8.
_base_ = ['./sapiens2_0.4b_seg_bodypart29-1024x768.py']

pretrained_checkpoint = 'pretrain-0.8b'
model = dict(
    backbone=dict(arch='sapiens2_0.8b', init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(in_channels=1280))

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=5e-4, betas=(0.9, 0.999), weight_decay=0.1),
    paramwise_cfg=dict(layer_decay_rate=0.85),
    clip_grad=dict(max_norm=4.0, norm_type=2))

max_iters = 30000
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=500, end=max_iters),
]
train_cfg = dict(max_iters=max_iters)
train_dataloader = dict(batch_size=5, num_workers=4)
