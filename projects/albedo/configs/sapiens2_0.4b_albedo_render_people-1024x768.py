# Sapiens2-0.4B albedo at 1024x768, the official recipe: 20k iterations, bf16, 20 images per GPU x 8
# GPUs. No photometric augmentation. No official albedo weights exist. Data: directory datasets (rgb/, albedo/,
# mask/) under data/albedo/.
_base_ = ['sapiens2::_base_/dense_runtime.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_albedo'], allow_failed_imports=False)

pretrained_checkpoint = 'pretrain-0.4b'
image_size = (1024, 768)  # (H, W)
train_data_root = 'data/albedo/train'
val_data_root = 'data/albedo/val'

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
        type='AlbedoHead',
        in_channels=1024,
        upsample_channels=(768, 512, 256, 128),
        conv_out_channels=(64, 32, 16),
        conv_kernel_sizes=(3, 3, 3),
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
    dict(type='DenseRandomScale', prob=0.3, scale_range=(0.5, 2.0), map_interpolations=dense_maps),
    dict(type='DenseRandomCropContinuous', prob=0.3, aspect_range=(0.5, 2.0), area_range=(0.4, 1.0)),
    dict(type='DenseRandomFlip', prob=0.3),
    dict(type='Letterbox', size=image_size, map_interpolations=dense_maps),
    dict(type='mmseg.RandomGaussianNoise', prob=0.2),
    dict(type='FilterDenseSample', min_valid_pixels=16, max_coverage=0.96),
    dict(type='PackDenseInputs', target_key='gt_albedo'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAlbedoAnnotations'),
    dict(type='Letterbox', size=image_size, test_mode=True),
    dict(type='PackDenseInputs', target_key='gt_albedo'),
]

train_dataloader = dict(
    batch_size=20,
    num_workers=4,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(type='AlbedoDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=4,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type='AlbedoDirDataset', data_root=val_data_root, pipeline=val_pipeline, test_mode=True))
test_dataloader = val_dataloader
val_evaluator = dict(type='AlbedoMetric', data_range=1.0)
test_evaluator = val_evaluator

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')

default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=1000, save_best='albedo/mae', rule='less'),
    visualization=dict(type='AlbedoVisualizationHook', interval=50))
