# Runtime of the dense projects (normal, pointmap, albedo, matting): the official optimiser at 0.4b (AdamW, layer-wise
# lr decay, clip 2.0; size configs override lr / layer decay / clip; bf16 tasks switch the wrapper to
# AmpOptimWrapper). The schedule is a config's own choice from ./schedules/.
_base_ = ['./default_runtime.py']

default_scope = 'sapiens2'

optim_wrapper = dict(
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=5e-4, betas=(0.9, 0.999), weight_decay=0.1),
    paramwise_cfg=dict(layer_decay_rate=0.8),
    clip_grad=dict(max_norm=2.0, norm_type=2))
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
