# Small albedo model on SynthHumans, trained from scratch on a CPU: the 1024x768 config with the tiny backbone
# (128-d, 4 blocks) at 256x192 (a 16x12 token grid) and a narrow RMSNorm trunk with three upsample blocks (x8: 128x96
# maps, bilinearly upsampled to the 256x192 targets by the loss); flip and light scale augmentation.
# Data: tools/misc/train_demo_models.py renders it (or: python tools/dataset_converters/make_synthhumans.py
# --out data/synthhumans_demo --num-train 2000 --num-val 200 --size 384 288 --seed 0).
_base_ = ['./sapiens2_0.4b_albedo_render_people-1024x768.py', 'sapiens2::_base_/synthhumans_cpu.py']

data_root = 'data/synthhumans_demo'
image_size = (256, 192)  # (H, W)
# Schedule sized so that `tools/misc/train_demo_models.py --jobs 2 --threads 1` trains all six demo models in
# about 50 minutes on 2 CPU cores (two tasks at a time, one core each; batch 8; see docs/demo_models.md).
# Earlier, at 300 iterations the MAE was 0.127 (constant 0.222).
max_iters = 1000
warmup_iters = 100

model = dict(
    use_checkpoint=False,
    backbone=dict(arch='sapiens2_tiny', img_size=image_size, patch_size=16, init_cfg=None),
    decode_head=dict(in_channels=128, upsample_channels=(64, 32, 16), conv_out_channels=(16, ),
                     conv_kernel_sizes=(3, )))

dense_maps = dict(gt_mask='nearest', gt_albedo='bilinear')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAlbedoAnnotations'),
    dict(type='DenseRandomFlip', prob=0.5),
    dict(type='DenseRandomScale', prob=0.3, scale_range=(0.8, 1.25), map_interpolations=dense_maps),
    dict(type='Letterbox', size=image_size, map_interpolations=dense_maps),
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
    batch_size=8, **_base_.cpu_train_loader, dataset=dict(data_root=f'{data_root}/train', pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=8, **_base_.cpu_val_loader, dataset=dict(data_root=f'{data_root}/val', pipeline=val_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(_delete_=True, **_base_.cpu_optim_wrapper)
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(
    checkpoint=dict(interval=max_iters, save_best=None), logger=dict(interval=20), visualization=dict(interval=50))
