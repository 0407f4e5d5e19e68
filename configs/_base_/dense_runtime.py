# Runtime of the dense regression projects (normal, pointmap, albedo): the official recipe at 0.4b
# (AdamW, layer-wise lr decay, 500 warm-up iterations, then linear decay to 0).
# Size variants override lr / layer decay / clip / iterations; bf16 tasks switch the wrapper to AmpOptimWrapper.
_base_ = ['./default_runtime.py']

default_scope = 'sapiens2'

optim_wrapper = dict(
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=5e-4, betas=(0.9, 0.999), weight_decay=0.1),
    paramwise_cfg=dict(layer_decay_rate=0.8),
    clip_grad=dict(max_norm=2.0, norm_type=2))

max_iters = 20000
warmup_iters = 500
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=max_iters, val_interval=1000)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
