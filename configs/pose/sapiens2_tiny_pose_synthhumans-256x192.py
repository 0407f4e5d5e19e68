# Small 308-keypoint pose model on SynthHumans, trained from scratch on a CPU: the 1024x768 config with the tiny
# backbone (128-d, 4 blocks) at 256x192 (a 16x12 token grid), heatmaps at 64x48.
# Data: tools/misc/train_demo_models.py renders it (or: python tools/dataset_converters/make_synthhumans.py
# --out data/synthhumans_demo --num-train 2000 --num-val 200 --size 384 288 --seed 0).
_base_ = ['./sapiens2_0.4b_pose_goliath-1024x768.py', '../_base_/synthhumans_cpu.py']

data_root = 'data/synthhumans_demo/'
image_size = (256, 192)  # (H, W)

# Schedule sized so that `tools/misc/train_demo_models.py --jobs 2 --threads 1` trains all six demo models in
# about 50 minutes on 2 CPU cores (two tasks at a time, one core each; batch 8; see docs/demo_models.md).
# Earlier, at 500 iterations body PCK@0.05 was 0.30, barely above the constant baseline (0.29).
max_iters = 2400
val_interval = max_iters // 2  # one validation half-way shows whether it is still improving
warmup_iters = 100
train_cfg = dict(max_iters=max_iters, val_interval=val_interval)
optim_wrapper = dict(_delete_=True, **_base_.cpu_optim_wrapper)
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
default_hooks = dict(logger=dict(interval=20), checkpoint=dict(interval=max_iters, save_best=None))

# Heatmaps at 1/4 of the input; sigma 2 (the scaled official value is 6 * 48 / 192 = 1.5).
codec = dict(type='FastUDPHeatmap', input_size=(192, 256), heatmap_size=(48, 64), sigma=2.0)

model = dict(
    backbone=dict(arch='sapiens2_tiny', img_size=image_size, patch_size=16, init_cfg=None),
    # 16x12 tokens -> two stride-2 deconvs -> 64x48 heatmaps
    head=dict(
        in_channels=128,
        deconv_out_channels=(128, 64),
        deconv_kernel_sizes=(4, 4),
        conv_out_channels=(64, ),
        conv_kernel_sizes=(3, ),
        decoder=codec,
        # The official Kaiming init of conv_pose too, except that the output layer starts near zero (mmpose's
        # default): with Kaiming there a from-scratch model first spends its steps shrinking large random heatmaps
        # and then settles on empty ones (loss flat at 0.04, PCK ~0 after 180 iterations); from near zero it
        # localises within 100 iterations.
        init_cfg=dict(type='Kaiming', layer=['Conv2d', 'ConvTranspose2d'], mode='fan_out', nonlinearity='relu',
                      distribution='normal', bias=0,
                      override=dict(type='Normal', name='conv_pose', std=0.001, bias=0))))

# The official augmentations at milder strength (half bodies, colour, blur, an occluding hole): the model has only
# seen rendered people, and real photos differ from them in colour, sharpness and framing (docs/demo_models.md).
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='GetBBoxCenterScale', padding=1.25),
    dict(type='RandomFlip', direction='horizontal', prob=0.5),
    dict(type='RandomHalfBody', min_total_keypoints=9, min_upper_keypoints=2, min_lower_keypoints=3, padding=1.5,
         prob=0.2, upper_prioritized_prob=0.7),
    dict(type='RandomBBoxTransform', shift_factor=0.12, shift_prob=0.3, scale_factor=(0.7, 1.3), scale_prob=1.0,
         rotate_factor=40.0, rotate_prob=0.5),
    dict(type='Sapiens2TopdownAffine', input_size=codec['input_size'], use_udp=True, drop_outside=True),
    dict(type='RandomApply', transforms=[dict(type='PhotometricDistortion')], prob=0.8),
    dict(type='RandomBlur', mode='mean', prob=0.1),
    dict(type='RandomBlur', mode='median', prob=0.1),
    dict(type='CoarseDropout', hole_size=(0.1, 0.3), num_holes=1, prob=0.3),
    # 238 of the 308 points are the face: at weight 1 they dominate the loss of so small a model, which then draws
    # face dots and no skeleton (docs/demo_models.md).
    dict(type='PartKeypointWeights', partitions={{_base_.keypoint_partitions}}, weights=dict(face=0.1)),
    dict(type='GenerateTarget', encoder=codec, use_dataset_keypoint_weights=True),
    # Every crop held a person, so the model found one in a grey wall too: a tenth are scenes without one, whose
    # heatmaps are all zero.
    dict(type='RandomEmptyCrop', prob=0.1),
    # Without it the model found a third as many keypoints in black-and-white photos; after the empty crops, or grey
    # alone tells that a person is there (docs/demo_models.md).
    dict(type='RandomGrayscale', prob=0.2, keep_channels=True, channel_weights=(0.114, 0.587, 0.299)),  # mmcv's; BGR
    dict(type='PackPoseInputs'),
]
val_pipeline = [
    dict(type='LoadImage'),
    dict(type='GetBBoxCenterScale', padding=1.25),
    dict(type='Sapiens2TopdownAffine', input_size=codec['input_size'], use_udp=True),
    dict(type='PackPoseInputs'),
]
train_dataloader = dict(
    batch_size=8,
    **_base_.cpu_train_loader,
    dataset=dict(data_root=data_root, ann_file='annotations/keypoints308_train.json', pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=8,
    **_base_.cpu_val_loader,
    dataset=dict(data_root=data_root, ann_file='annotations/keypoints308_val.json', pipeline=val_pipeline))
test_dataloader = val_dataloader

# Whole-body and per-part COCO AP (standard OKS with the 308 sigmas) and PCK@0.05 of the longer box side, overall and
# per part.
val_evaluator = [
    {{_base_.coco_metric}},
    dict(type='KeypointPartitionMetric', metric={{_base_.coco_metric}}, partitions={{_base_.keypoint_partitions}}),
    dict(type='PCKAccuracy', thr=0.05, norm_item='bbox'),
    dict(type='KeypointPartitionMetric', metric=dict(type='PCKAccuracy', thr=0.05, norm_item='bbox'),
         partitions={{_base_.keypoint_partitions}}),
]
test_evaluator = val_evaluator
