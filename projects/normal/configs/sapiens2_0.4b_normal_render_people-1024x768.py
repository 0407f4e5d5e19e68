# Sapiens2-0.4B surface normals at 1024x768, the official recipe: 20k iterations, bf16,
# 20 images per GPU x 8 GPUs in the paper. Data: directory datasets (rgb/, mask/, normal/) under data/normal/.
_base_ = ['sapiens2::_base_/dense_runtime.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_normal'], allow_failed_imports=False)

pretrained_checkpoint = 'pretrain-0.4b'
image_size = (1024, 768)  # (H, W)
train_data_root = 'data/normal/train'
val_data_root = 'data/normal/val'

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
        type='NormalHead',
        in_channels=1024,
        upsample_channels=(768, 512, 256, 128),
        conv_out_channels=(64, 32, 16),
        conv_kernel_sizes=(3, 3, 3),
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
    dict(type='DenseRandomScale', prob=0.3, scale_range=(0.5, 2.0), map_interpolations=dense_maps),
    dict(type='DenseRandomCropContinuous', prob=0.3, aspect_range=(0.5, 2.0), area_range=(0.4, 1.0)),
    dict(type='DenseRandomFlip', prob=0.3, negate_x_keys=('gt_normal', )),
    dict(type='Letterbox', size=image_size, map_interpolations=dense_maps),
    dict(type='mmseg.RandomGaussianBlur', prob=0.3),
    dict(type='mmseg.RandomGaussianNoise', prob=0.3),
    dict(type='RandomSolarize', prob=0.3, threshold=128),
    dict(type='FilterDenseSample', min_valid_pixels=16, max_coverage=0.96),
    dict(type='PackDenseInputs', target_key='gt_normal'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadNormalAnnotations'),
    dict(type='Letterbox', size=image_size, test_mode=True),
    dict(type='PackDenseInputs', target_key='gt_normal'),
]

train_dataloader = dict(
    batch_size=20,
    num_workers=4,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(type='NormalDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=4,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type='NormalDirDataset', data_root=val_data_root, pipeline=val_pipeline, test_mode=True))
test_dataloader = val_dataloader
val_evaluator = dict(type='NormalMetric')
test_evaluator = val_evaluator

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')

default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=1000, save_best='normal/mean_angle', rule='less'),
    visualization=dict(type='NormalVisualizationHook', interval=50))
