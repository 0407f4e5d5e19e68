# Tiny human alpha matting on SynthHumans (sapiens2.datasets.synthhumans: soft alpha, pre-multiplied foreground and
# background per image) for tests and demos on a CPU: the nano backbone from scratch with 8x8 patches (a 16x12 token
# grid at 128x96), a narrow two-block trunk (x4: 64x48 maps, bilinearly upsampled to the 128x96 targets by the loss),
# flip-only augmentation, 500 iterations (segmenting the people takes longer from scratch than the 300 of the other
# nano configs). Metrics at the original 256x192 with a radius-2 trimap.
_base_ = ['./sapiens2_0.4b_matting_humans-1024x768.py']

data_root = 'data/synthhumans'
image_size = (128, 96)  # (H, W)
max_iters = 500

model = dict(
    use_checkpoint=False,
    backbone=dict(arch='sapiens2_nano', img_size=image_size, patch_size=8, init_cfg=None),
    decode_head=dict(
        in_channels=64,
        upsample_channels=(32, 16),
        conv_out_channels=(16, ),
        conv_kernel_sizes=(3, ),
        # The Laplacian term at weight 1 (level weights up to 16) outweighs the others for a from-scratch model.
        loss_decode=[
            dict(type='MattingAlphaL1Loss', loss_weight=1.0),
            dict(type='MattingAlphaL1Loss', loss_weight=2.0, region='unknown', loss_name='loss_alpha_l1_unknown'),
            dict(type='MattingAlphaGradientLoss', loss_weight=1.0),
            dict(type='MattingLaplacianLoss', loss_weight=0.5),
            dict(type='MattingCompositionLoss', loss_weight=1.0),
            dict(type='MattingForegroundL1Loss', loss_weight=1.0),
        ]))

dense_maps = dict(gt_mask='nearest', gt_alpha='bilinear', gt_foreground='bilinear', gt_background='bilinear',
                  gt_image='bilinear', gt_trimap='nearest')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadMattingAnnotations'),
    dict(type='DenseRandomFlip', prob=0.5),
    dict(type='Letterbox', size=image_size, map_interpolations=dense_maps),
    dict(type='GenerateTrimap', radius=(1, 2), keep_existing=False),
    dict(type='FormatMattingTarget'),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadMattingAnnotations'),
    dict(type='GenerateTrimap', radius=2),
    dict(type='Letterbox', size=image_size, test_mode=True),
    dict(type='FormatMattingTarget', with_composition=False),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
train_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    pin_memory=False,
    dataset=dict(data_root=f'{data_root}/train', pipeline=train_pipeline, foreground_premultiplied=True))
val_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(data_root=f'{data_root}/val', pipeline=val_pipeline, foreground_premultiplied=True))
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
