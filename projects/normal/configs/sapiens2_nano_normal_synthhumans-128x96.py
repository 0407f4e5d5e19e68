# Tiny surface normals on SynthHumans (sapiens2.datasets.synthhumans) for tests and demos on a CPU: the nano
# backbone from scratch with 8x8 patches (a 16x12 token grid at 128x96), a narrow two-block trunk (x4:
# 64x48 maps, bilinearly upsampled to the 128x96 targets by the loss), flip-only
# augmentation, a few hundred iterations.
_base_ = ['./sapiens2_0.4b_normal_render_people-1024x768.py']

data_root = 'data/synthhumans'
image_size = (128, 96)  # (H, W)
max_iters = 300

model = dict(
    use_checkpoint=False,
    backbone=dict(arch='sapiens2_nano', img_size=image_size, patch_size=8, init_cfg=None),
    decode_head=dict(
        in_channels=64,
        upsample_channels=(32, 16),
        conv_out_channels=(16, ),
        conv_kernel_sizes=(3, ),
        # The gradient term at the official weight 10 dominates a from-scratch model and keeps it near the mean
        # direction for the few hundred iterations a CPU test affords; 1 lets the cosine term lead.
        loss_decode=[
            dict(type='NormalCosineSimilarityLoss', loss_weight=10.0),
            dict(type='MaskedL1Loss', loss_weight=1.0),
            dict(type='MaskedGradientMSELoss', loss_weight=1.0, loss_name='loss_grad'),
        ]))

dense_maps = dict(gt_mask='nearest', gt_normal='nearest')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadNormalAnnotations'),
    dict(type='DenseRandomFlip', prob=0.5, negate_x_keys=('gt_normal', )),
    dict(type='Letterbox', size=image_size, map_interpolations=dense_maps),
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
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    pin_memory=False,
    dataset=dict(data_root=f'{data_root}/train', pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=f'{data_root}/val', pipeline=val_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=3e-3, betas=(0.9, 0.999), weight_decay=0.01),
    paramwise_cfg=dict(layer_decay_rate=0.9),
    clip_grad=dict(max_norm=2.0, norm_type=2))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=20),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=20, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(
    checkpoint=dict(interval=max_iters), logger=dict(interval=20), visualization=dict(interval=4))
