# The official optimiser of the task configs at 0.4b: AdamW (lr 5e-4, weight decay 0.1) with layer-wise lr decay 0.8
# and gradient clipping at 2.0, in fp32. bf16 tasks switch the wrapper (type='AmpOptimWrapper', dtype='bfloat16');
# sizes override the lr, decay and clip.
optim_wrapper = dict(
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=5e-4, betas=(0.9, 0.999), weight_decay=0.1),
    paramwise_cfg=dict(layer_decay_rate=0.8),
    clip_grad=dict(max_norm=2.0, norm_type=2))
