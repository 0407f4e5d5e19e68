# 308-keypoint top-down pose at 1024x768 (H x W), the official recipe at 0.4b without the backbone and the schedule:
# each size config takes them from ../../_base_/models/ and ../../_base_/schedules/.
# The official training data is internal; point data_root / ann_file at COCO-style 308-keypoint files
# (see docs/pose.md).
_base_ = ['../../_base_/pose_runtime.py', '../../_base_/optimizers/adamw_layer_decay.py',
          '../../_base_/datasets/keypoints308_partitions.py']

val_interval = 1000
# Read by mmpose's MMPoseInferencer: a top-down model, and the dataset whose metainfo it draws with. Its module
# (sapiens2.datasets.pose) names no body/face/hand category, so the inferencer picks no default detector and uses the
# whole image as one person box; pass det_model=... for a detector (docs/inference.md).
data_mode = 'topdown'
dataset_type = 'Keypoints308CocoDataset'

val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')  # bf16 autocast (GPU only)
default_hooks = dict(checkpoint=dict(save_best='coco/AP', rule='greater'))

# UDP heatmaps at 1/4 of the input, sigma 6 at 192-wide heatmaps. FastUDPHeatmap is mmpose's UDPHeatmap with a
# batched torch decode (the same coordinates within 0.01 px), used by validation, tools/test.py and inference alike.
codec = dict(type='FastUDPHeatmap', input_size=(768, 1024), heatmap_size=(192, 256), sigma=6)

model = dict(
    type='TopdownPoseEstimator',
    data_preprocessor=dict(
        type='PoseDataPreprocessor', mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375], bgr_to_rgb=True),
    head=dict(
        type='Sapiens2HeatmapHead',
        in_channels=1024,
        out_channels=308,
        deconv_out_channels=(1024, 768),
        deconv_kernel_sizes=(4, 4),
        conv_out_channels=(512, 512, 256),
        conv_kernel_sizes=(1, 1, 1),
        loss=dict(type='KeypointMSELoss', use_target_weight=True, loss_weight=10.0),
        decoder=codec),
    test_cfg=dict(flip_test=True, flip_mode='heatmap', shift_heatmap=False))

train_pipeline = [
    dict(type='LoadImage'),
    dict(type='GetBBoxCenterScale', padding=1.25),
    dict(type='RandomFlip', direction='horizontal', prob=0.5),
    dict(type='RandomHalfBody', min_total_keypoints=9, min_upper_keypoints=2, min_lower_keypoints=3, padding=1.5,
         prob=0.3, upper_prioritized_prob=0.7),
    dict(type='RandomBBoxTransform', shift_factor=0.16, shift_prob=0.3, scale_factor=(0.5, 1.5), scale_prob=1.0,
         rotate_factor=80.0, rotate_prob=0.6),
    dict(type='Sapiens2TopdownAffine', input_size=codec['input_size'], use_udp=True, drop_outside=True),
    dict(type='RandomApply', transforms=[dict(type='PhotometricDistortion')], prob=0.8),
    dict(type='RandomBlur', mode='mean', prob=0.1),
    dict(type='RandomBlur', mode='median', prob=0.1),
    dict(type='CoarseDropout', hole_size=(0.2, 0.4), num_holes=1, prob=1.0),
    dict(type='GenerateTarget', encoder=codec),
    dict(type='PackPoseInputs'),
]
val_pipeline = [
    dict(type='LoadImage'),
    dict(type='GetBBoxCenterScale', padding=1.25),
    dict(type='Sapiens2TopdownAffine', input_size=codec['input_size'], use_udp=True),
    dict(type='PackPoseInputs'),
]

data_root = 'data/keypoints308/'
train_dataloader = dict(
    batch_size=6,
    num_workers=4,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/keypoints308_train.json',
        data_prefix=dict(img=''),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=4,
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False, round_up=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/person_keypoints_test2025_1k.json',
        data_prefix=dict(img=''),
        test_mode=True,
        pipeline=val_pipeline))
test_dataloader = val_dataloader

# COCO keypoint AP over all 308 keypoints (official scoring and OKS-NMS), the per-part breakdown, and PCK@0.05 (bbox).
coco_metric = dict(
    type='CocoMetric', iou_type='keypoints', use_area=True, score_mode='bbox_keypoint', keypoint_score_thr=0.2,
    nms_mode='oks_nms', nms_thr=0.9)
val_evaluator = [
    coco_metric,
    dict(type='KeypointPartitionMetric', metric=coco_metric, partitions={{_base_.keypoint_partitions}}),
    dict(type='PCKAccuracy', thr=0.05, norm_item='bbox'),
]
test_evaluator = val_evaluator
