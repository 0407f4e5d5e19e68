# Tiny deterministic run for the distributed/reliability tests (CPU, a few iterations).
_base_ = ['../../../configs/_base_/default_runtime.py']
custom_imports = dict(imports=['sapiens2', 'tests.engine.dist_toy'], allow_failed_imports=False)
default_scope = 'mmengine'
model = dict(type='DistToyModel', dim=8)
_loader = dict(num_workers=0, collate_fn=dict(type='default_collate'), dataset=dict(type='DistToyDataset'))
train_dataloader = dict(batch_size=4, sampler=dict(type='DefaultSampler', shuffle=True, seed=0), **_loader)
test_dataloader = dict(batch_size=5, sampler=dict(type='DefaultSampler', shuffle=False), **_loader)
test_evaluator = dict(type='DistToyMetric')
test_cfg = dict(type='TestLoop')
train_cfg = dict(type='IterBasedTrainLoop', max_iters=6, val_interval=1000)
optim_wrapper = dict(
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=1e-2, weight_decay=0.01),
    paramwise_cfg=dict(layer_decay_rate=0.8))
param_scheduler = [dict(type='LinearLR', start_factor=0.1, by_epoch=False, begin=0, end=4)]
default_hooks = dict(logger=dict(interval=1), checkpoint=dict(interval=3, max_keep_ckpts=-1))
