# Sapiens2-0.4B canonical pointmap + focal scale at 1024x768, the official recipe: 20k iterations,
# fp32, 8 images per GPU x 8 GPUs in the paper. Data: directory datasets (rgb/, mask/, depth/,
# camera_intrinsics/, camera_extrinsics/) under data/pointmap/.
_base_ = ['sapiens2::_base_/dense_runtime.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_pointmap'], allow_failed_imports=False)

pretrained_checkpoint = 'pretrain-0.4b'
image_size = (1024, 768)  # (H, W)
canonical_focal = 768.0
train_data_root = 'data/pointmap/train'
val_data_root = 'data/pointmap/val'

model = dict(
    type='DenseEstimator',
    use_checkpoint=True,
    backbone=dict(
        type='Sapiens2',
        arch='sapiens2_0.4b',
        img_size=image_size,
        patch_size=16,
        out_type='featmap',
        final_norm=True,
        use_tokenizer=False,
        with_cls_token=True,
        init_cfg=dict(type='Pretrained', checkpoint=pretrained_checkpoint)),
    decode_head=dict(
        type='PointmapHead',
        in_channels=1024,
        img_size=image_size,
        upsample_channels=(1536, 768, 512, 256),
        conv_out_channels=(64, 32, 16),
        conv_kernel_sizes=(3, 3, 3),
        scale_conv_out_channels=(1536, 512, 128),
        scale_hidden_channels=(512, 128),
        loss_decode=[
            dict(type='PointmapL1Loss', loss_weight=2.0, clamp_max=4.0),
            dict(type='PointmapL1Loss', loss_weight=1.0, scale_factor=2, clamp_max=4.0,
                 loss_name='loss_multiscale_l1_2'),
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
    dict(type='DenseRandomScale', prob=0.3, scale_range=(0.5, 2.0), map_interpolations=dense_maps),
    dict(type='DenseRandomCropContinuous', prob=0.3, aspect_range=(0.5, 2.0), area_range=(0.4, 1.0)),
    dict(type='DenseRandomFlip', prob=0.3),
    dict(type='Letterbox', size=image_size, map_interpolations=dense_maps),
    dict(type='PointmapGenerateTarget', canonical_focal=canonical_focal, min_depth=0.04),
    dict(type='FilterDenseSample', min_valid_pixels=16, max_coverage=0.96),
    dict(type='PackDenseInputs', target_key='gt_pointmap', extra_keys=pack_extra_keys),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadPointmapAnnotations'),
    dict(type='Letterbox', size=image_size, test_mode=True),
    dict(type='PointmapGenerateTarget', canonical_focal=canonical_focal, min_depth=None),
    dict(type='PackDenseInputs', target_key='gt_pointmap', extra_keys=pack_extra_keys),
]

train_dataloader = dict(
    batch_size=8,
    num_workers=4,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(type='PointmapDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=4,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type='PointmapDirDataset', data_root=val_data_root, pipeline=val_pipeline, test_mode=True))
test_dataloader = val_dataloader
val_evaluator = dict(type='PointmapMetric')
test_evaluator = val_evaluator

# Mixed precision stays off (the runtime's fp32 OptimWrapper), as in the official pointmap runs.
default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=1000, save_best='pointmap/l2_mean', rule='less'),
    visualization=dict(type='PointmapVisualizationHook', interval=50))
