# Settings shared by the small SynthHumans configs that train from scratch on a CPU in minutes
# (configs/{pose,seg}/sapiens2_tiny_*_synthhumans-*.py, projects/*/configs/sapiens2_tiny_*_synthhumans-*.py).
# List it in `_base_` next to the task's full-size config and use its variables through `_base_`, e.g.
#   optim_wrapper = dict(_delete_=True, **_base_.cpu_optim_wrapper)
#   train_dataloader = dict(batch_size=16, **_base_.cpu_train_loader, dataset=dict(...))
# (MMEngine refuses a key defined by two bases, so these carry their own names.)

# fp32 AdamW (fused: about 0.1 s per iteration saved at batch 8 on one core; bf16 autocast is for GPUs), no layer-wise
# decay for a model trained from scratch, the official clip.
cpu_optim_wrapper = dict(
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=2e-3, betas=(0.9, 0.999), weight_decay=0.01, fused=True),
    paramwise_cfg=dict(layer_decay_rate=1.0),
    clip_grad=dict(max_norm=2.0, norm_type=2))
# Data loading in the training process: worker processes would compete with the model for the same cores.
cpu_train_loader = dict(num_workers=0, persistent_workers=False, pin_memory=False)
cpu_val_loader = dict(num_workers=0, persistent_workers=False)
