# Surface normals at 1024x768, the official recipe at 0.4b (20k iterations, bf16) without the backbone: each size
# config takes one from sapiens2::_base_/models/. Data: directory datasets (rgb/, mask/, normal/) under data/normal/.
_base_ = ['sapiens2::_base_/dense_1024x768.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_normal'], allow_failed_imports=False)

train_data_root = 'data/normal/train'
val_data_root = 'data/normal/val'

model = dict(decode_head=dict(
    type='NormalHead',
    loss_decode=[
        dict(type='NormalCosineSimilarityLoss', loss_weight=10.0),
        dict(type='MaskedL1Loss', loss_weight=1.0),
        # The original's "NormalGradL1Loss": squared error of forward differences (docs/differences.md).
        dict(type='MaskedGradientMSELoss', loss_weight=10.0, loss_name='loss_grad'),
    ]))

dense_maps = dict(gt_mask='nearest', gt_normal='nearest')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadNormalAnnotations'),
    dict(type='mmseg.PhotoMetricDistortion'),
    dict(type='RandomDownUpSample', prob=0.2, scale_range=(0.1, 0.7)),
    dict(_base_.random_scale, map_interpolations=dense_maps),
    _base_.random_crop,
    dict(type='DenseRandomFlip', prob=0.3, negate_x_keys=('gt_normal', )),
    dict(type='Letterbox', size=_base_.image_size, map_interpolations=dense_maps),
    dict(type='mmseg.RandomGaussianBlur', prob=0.3),
    dict(type='mmseg.RandomGaussianNoise', prob=0.3),
    dict(type='RandomSolarize', prob=0.3, threshold=128),
    _base_.filter_samples,
    dict(type='PackDenseInputs', target_key='gt_normal'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadNormalAnnotations'),
    dict(type='Letterbox', size=_base_.image_size, test_mode=True),
    dict(type='PackDenseInputs', target_key='gt_normal'),
]
train_dataloader = dict(dataset=dict(type='NormalDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(type='NormalDirDataset', data_root=val_data_root, pipeline=val_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(type='NormalMetric')
test_evaluator = val_evaluator

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')
default_hooks = dict(checkpoint=dict(save_best='normal/mean_angle'),
                     visualization=dict(type='NormalVisualizationHook', interval=50))
