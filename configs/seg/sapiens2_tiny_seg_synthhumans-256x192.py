# Small 29-class body-part segmentation on SynthHumans, trained from scratch on a CPU: the 1024x768 config with the
# tiny backbone (128-d, 4 blocks) at 256x192 (a 16x12 token grid) and a narrow head with three deconvolutions
# (x8, 128x96 logits). Training labels are rescaled to the logit size (mmseg SegRescale), which keeps the loss cheap;
# validation scores the logits resized back to the label size. Losses (weighted CE + Dice) are the official ones.
# Data: tools/misc/train_demo_models.py renders it (or: python tools/dataset_converters/make_synthhumans.py
# --out data/synthhumans_demo --num-train 2000 --num-val 200 --size 384 288 --seed 0).
_base_ = ['./sapiens2_0.4b_seg_bodypart29-1024x768.py', '../_base_/synthhumans_cpu.py']

data_root = 'data/synthhumans_demo'
image_size = (256, 192)  # (H, W)
embed_dims = 128

model = dict(
    data_preprocessor=dict(size=image_size),
    backbone=dict(arch='sapiens2_tiny', img_size=image_size, patch_size=16, with_cp=False, init_cfg=None),
    decode_head=dict(
        in_channels=embed_dims,
        deconv_out_channels=(128, 64, 32),
        conv_out_channels=(32, ),
        channels=32,
        # The official Kaiming init, except that the classifier starts near zero (mmseg's default for conv_seg), as
        # the pose head's output layer does (configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py).
        init_cfg=dict(type='Kaiming', layer='Conv2d', mode='fan_out', nonlinearity='relu', distribution='normal',
                      bias=0, override=dict(type='Normal', name='conv_seg', std=0.01, bias=0))))

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal', swap_seg_labels={{_base_.swap_seg_labels}}),
    dict(type='RandomResize', scale=(image_size[1], image_size[0]), ratio_range=(1.0, 1.5), keep_ratio=True),
    dict(type='RandomCrop', crop_size=image_size),
    dict(type='Resize', scale=(image_size[1], image_size[0]), keep_ratio=False),
    dict(type='SegRescale', scale_factor=0.5),
    dict(type='PackSegInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(image_size[1], image_size[0]), keep_ratio=False),
    dict(type='LoadAnnotations'),
    dict(type='PackSegInputs'),
]
train_dataloader = dict(
    batch_size=8,
    **_base_.cpu_train_loader,
    dataset=dict(
        data_root=data_root, data_prefix=dict(img_path='train/rgb', seg_map_path='train/seg'),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=8,
    **_base_.cpu_val_loader,
    dataset=dict(
        data_root=data_root, data_prefix=dict(img_path='val/rgb', seg_map_path='val/seg'), pipeline=test_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(_delete_=True, **_base_.cpu_optim_wrapper)
# Schedule sized so that `tools/misc/train_demo_models.py --jobs 2 --threads 1` trains all six demo models in
# about 50 minutes on 2 CPU cores (two tasks at a time, one core each; batch 8; see docs/demo_models.md).
# Earlier, at 360 iterations mIoU was 7 % and the pixel accuracy below the constant's (59 % vs 85 %).
max_iters = 1800
warmup_iters = 100
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters // 2)  # half-way: still improving?
default_hooks = dict(checkpoint=dict(interval=max_iters, save_best=None), logger=dict(interval=20))
# Per-class IoU is printed with the summary (Eyeglass and the lips cover ~10 pixels of a 384x288 image).
