# Canonical pointmap + focal scale at 1024x768, the official recipe at 0.4b (20k iterations, fp32, 8 images per GPU)
# without the backbone: each size config takes one from sapiens2::_base_/models/. Data: directory datasets (rgb/,
# mask/, depth/, camera_intrinsics/, camera_extrinsics/) under data/pointmap/.
_base_ = ['sapiens2::_base_/dense_1024x768.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_pointmap'], allow_failed_imports=False)

canonical_focal = 768.0
train_data_root = 'data/pointmap/train'
val_data_root = 'data/pointmap/val'

model = dict(decode_head=dict(
    type='PointmapHead',
    img_size=_base_.image_size,
    upsample_channels=(1536, 768, 512, 256),
    scale_conv_out_channels=(1536, 512, 128),
    scale_hidden_channels=(512, 128),
    loss_decode=[
        dict(type='PointmapL1Loss', loss_weight=2.0, clamp_max=4.0),
        dict(type='PointmapL1Loss', loss_weight=1.0, scale_factor=2, clamp_max=4.0, loss_name='loss_multiscale_l1_2'),
        dict(type='SiLogLoss', loss_weight=1.0),
        dict(type='PointmapIntrinsicsConsistencyLoss', loss_weight=1.0),
        dict(type='PointmapShiftInvariantL1Loss', loss_weight=1.0, clamp_max=4.0),
        dict(type='PointmapNormalLoss', loss_weight=2.0),
        dict(type='PointmapScaleL1Loss', loss_weight=4.0),
    ]))

dense_maps = dict(gt_mask='nearest', gt_depth='nearest')
pack_extra_keys = ('gt_scale', 'gt_mean_depth', 'original_K', 'cam_K')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadPointmapAnnotations'),
    dict(type='mmseg.PhotoMetricDistortion'),
    dict(_base_.random_scale, map_interpolations=dense_maps),
    _base_.random_crop,
    dict(type='DenseRandomFlip', prob=0.3),
    dict(type='Letterbox', size=_base_.image_size, map_interpolations=dense_maps),
    dict(type='PointmapGenerateTarget', canonical_focal=canonical_focal, min_depth=0.04),
    _base_.filter_samples,
    dict(type='PackDenseInputs', target_key='gt_pointmap', extra_keys=pack_extra_keys),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadPointmapAnnotations'),
    dict(type='Letterbox', size=_base_.image_size, test_mode=True),
    dict(type='PointmapGenerateTarget', canonical_focal=canonical_focal, min_depth=None),
    dict(type='PackDenseInputs', target_key='gt_pointmap', extra_keys=pack_extra_keys),
]
train_dataloader = dict(batch_size=8,
                        dataset=dict(type='PointmapDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(type='PointmapDirDataset', data_root=val_data_root, pipeline=val_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(type='PointmapMetric')
test_evaluator = val_evaluator

# Mixed precision stays off (the runtime's fp32 OptimWrapper), as in the official pointmap runs.
default_hooks = dict(checkpoint=dict(save_best='pointmap/l2_mean'),
                     visualization=dict(type='PointmapVisualizationHook', interval=50))
