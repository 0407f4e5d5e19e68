_base_ = ['../../configs/_base_/default_runtime.py']
custom_imports = dict(imports=['sapiens2', 'toy_modules'], allow_failed_imports=False)

model = dict(type='ToySapiens2Regressor',
             backbone=dict(type='Sapiens2', arch='sapiens2_nano', img_size=(32, 32), out_type='cls_token'))
dataset = dict(type='ToyImageDataset', num_samples=8, size=(32, 32))
train_dataloader = dict(batch_size=2, num_workers=0, dataset=dataset,
                        sampler=dict(type='DefaultSampler', shuffle=True))
train_cfg = dict(type='IterBasedTrainLoop', max_iters=4, val_interval=100)
optim_wrapper = dict(constructor='Sapiens2LayerDecayOptimWrapperConstructor',
                     optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.1),
                     paramwise_cfg=dict(layer_decay_rate=0.8), clip_grad=dict(max_norm=2.0))
param_scheduler = [dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=2),
                   dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=2, end=4)]
default_hooks = dict(checkpoint=dict(interval=2))
test_dataloader = dict(batch_size=2, num_workers=0, dataset=dataset, sampler=dict(type='DefaultSampler', shuffle=False))
test_cfg = dict(type='TestLoop')
test_evaluator = dict(type='ToyMSEMetric')
