# Small pointmap model on SynthHumans, trained from scratch on a CPU: the 1024x768 config with the tiny backbone
# (128-d, 4 blocks) at 256x192 (a 16x12 token grid, so the three stride-2 scale convs leave 2x2 cells) and a narrow
# trunk with three upsample blocks (x8: 128x96 maps, bilinearly upsampled to the 256x192 targets by the loss); flip
# augmentation only (scaling would change the apparent size that canonical depth is read from).
# Data: tools/misc/train_demo_models.py renders it (or: python tools/dataset_converters/make_synthhumans.py
# --out data/synthhumans_demo --num-train 2000 --num-val 200 --size 384 288 --seed 0).
_base_ = ['./sapiens2_0.4b_pointmap_render_people-1024x768.py', 'sapiens2::_base_/synthhumans_cpu.py']

data_root = 'data/synthhumans_demo'
image_size = (256, 192)  # (H, W)
# The official 768 px canonical focal goes with 768 px wide inputs; scaled to this input width it keeps canonical
# depths and the scale target O(1), as at full size.
canonical_focal = 192.0
# Schedule sized so that `tools/misc/train_demo_models.py --jobs 2 --threads 1` trains all six demo models in
# about 50 minutes on 2 CPU cores (two tasks at a time, one core each; batch 8; see docs/demo_models.md).
# Earlier, at 300 iterations AbsRel was 0.15 (constant 0.18).
max_iters = 1200
warmup_iters = 100

model = dict(
    use_checkpoint=False,
    backbone=dict(arch='sapiens2_tiny', img_size=image_size, patch_size=16, init_cfg=None),
    decode_head=dict(
        in_channels=128,
        img_size=image_size,
        patch_size=16,
        upsample_channels=(64, 32, 16),
        conv_out_channels=(16, ),
        conv_kernel_sizes=(3, ),
        scale_conv_out_channels=(64, 32, 16),
        scale_hidden_channels=(32, 16),
        # The official losses, except that the normals-from-points term (weight 2) is down-weighted: on a
        # from-scratch model it dominates the first few hundred iterations and holds depth at the mean plane.
        loss_decode=[
            dict(type='PointmapL1Loss', loss_weight=2.0, clamp_max=4.0),
            dict(type='PointmapL1Loss', loss_weight=1.0, scale_factor=2, clamp_max=4.0,
                 loss_name='loss_multiscale_l1_2'),
            dict(type='SiLogLoss', loss_weight=1.0),
            dict(type='PointmapIntrinsicsConsistencyLoss', loss_weight=1.0),
            dict(type='PointmapShiftInvariantL1Loss', loss_weight=1.0, clamp_max=4.0),
            dict(type='PointmapNormalLoss', loss_weight=0.2),
            dict(type='PointmapScaleL1Loss', loss_weight=4.0),
        ]))

dense_maps = dict(gt_mask='nearest', gt_depth='nearest')
pack_extra_keys = ('gt_scale', 'gt_mean_depth', 'original_K', 'cam_K')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadPointmapAnnotations'),
    dict(type='DenseRandomFlip', prob=0.5),
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
