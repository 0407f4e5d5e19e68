# Small human alpha-matting model on SynthHumans (soft alpha, pre-multiplied foreground and background per image),
# trained from scratch on a CPU: the 1024x768 config with the tiny backbone (128-d, 4 blocks) at 256x192 (a 16x12
# token grid) and a narrow trunk with three upsample blocks (x8: 128x96 maps, bilinearly upsampled to the 256x192
# targets by the losses); flip augmentation, trimaps of radius 1-3 for the unknown-region loss. The loss weights are
# those of the nano recipe (sapiens2_nano_matting_synthhumans-128x96.py). Metrics at the rendered 384x288 with a
# radius-3 trimap.
# Data: tools/misc/train_demo_models.py renders it (or: python tools/dataset_converters/make_synthhumans.py
# --out data/synthhumans_demo --num-train 2000 --num-val 200 --size 384 288 --seed 0).
_base_ = ['./sapiens2_0.4b_matting_humans-1024x768.py', 'sapiens2::_base_/synthhumans_cpu.py']

data_root = 'data/synthhumans_demo'
image_size = (256, 192)  # (H, W)
# Schedule sized so that `tools/misc/train_demo_models.py --jobs 2 --threads 1` trains all six demo models in
# about 50 minutes on 2 CPU cores (two tasks at a time, one core each; batch 8; see docs/demo_models.md).
max_iters = 800
warmup_iters = 100

model = dict(
    use_checkpoint=False,
    backbone=dict(arch='sapiens2_tiny', img_size=image_size, patch_size=16, init_cfg=None),
    decode_head=dict(
        in_channels=128,
        upsample_channels=(64, 32, 16),
        conv_out_channels=(16, ),
        conv_kernel_sizes=(3, ),
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
    dict(type='GenerateTrimap', radius=(1, 3), keep_existing=False),
    dict(type='FormatMattingTarget'),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadMattingAnnotations'),
    dict(type='GenerateTrimap', radius=3),
    dict(type='Letterbox', size=image_size, test_mode=True),
    dict(type='FormatMattingTarget', with_composition=False),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
train_dataloader = dict(
    batch_size=8,
    **_base_.cpu_train_loader,
    dataset=dict(data_root=f'{data_root}/train', pipeline=train_pipeline, foreground_premultiplied=True))
val_dataloader = dict(
    batch_size=8,
    **_base_.cpu_val_loader,
    dataset=dict(data_root=f'{data_root}/val', pipeline=val_pipeline, foreground_premultiplied=True))
test_dataloader = val_dataloader

optim_wrapper = dict(_delete_=True, **_base_.cpu_optim_wrapper)
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(
    checkpoint=dict(interval=max_iters, save_best=None), logger=dict(interval=20), visualization=dict(interval=50))
