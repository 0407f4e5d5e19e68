# Albedo at 1024x768, the official recipe at 0.4b (20k iterations, bf16, no photometric augmentation) without the
# backbone: each size config takes one from sapiens2::_base_/models/. Data: directory datasets (rgb/, albedo/, mask/)
# under data/albedo/.
_base_ = ['sapiens2::_base_/dense_1024x768.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_albedo'], allow_failed_imports=False)

train_data_root = 'data/albedo/train'
val_data_root = 'data/albedo/val'

model = dict(decode_head=dict(
    type='AlbedoHead',
    loss_decode=[
        dict(type='MaskedL1Loss', loss_weight=2.0),
        # The original's "AlbedoGradL1Loss": squared error of forward differences, 1/2 (mean_x + mean_y).
        dict(type='MaskedGradientMSELoss', loss_weight=2.0, loss_name='loss_grad', channel_reduction='mean',
             direction_reduction='mean'),
        dict(type='AlbedoChromaticityL1Loss', loss_weight=1.0),
    ]))

dense_maps = dict(gt_mask='nearest', gt_albedo='bilinear')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAlbedoAnnotations'),
    dict(_base_.random_scale, map_interpolations=dense_maps),
    _base_.random_crop,
    dict(type='DenseRandomFlip', prob=0.3),
    dict(type='Letterbox', size=_base_.image_size, map_interpolations=dense_maps),
    dict(type='mmseg.RandomGaussianNoise', prob=0.2),
    _base_.filter_samples,
    dict(type='PackDenseInputs', target_key='gt_albedo'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAlbedoAnnotations'),
    dict(type='Letterbox', size=_base_.image_size, test_mode=True),
    dict(type='PackDenseInputs', target_key='gt_albedo'),
]
train_dataloader = dict(dataset=dict(type='AlbedoDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(type='AlbedoDirDataset', data_root=val_data_root, pipeline=val_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(type='AlbedoMetric', data_range=1.0)
test_evaluator = val_evaluator

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')
default_hooks = dict(checkpoint=dict(save_best='albedo/mae'),
                     visualization=dict(type='AlbedoVisualizationHook', interval=50))
