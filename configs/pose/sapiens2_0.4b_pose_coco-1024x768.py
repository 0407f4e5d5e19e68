# Sapiens2-0.4B, COCO-17 body keypoints at 1024x768: the official 0.4b optimiser, layer decay and head (inherited from
# the 308-keypoint config) with 17 output channels, mmpose's CocoDataset with its metainfo (mmpose's
# configs/_base_/datasets/coco.py: names, skeleton, flip pairs, sigmas) and COCO keypoint AP (mmpose's CocoMetric).
# Schedule and batch as mmpose's ViTPose COCO configs (and Sapiens v1's): 210 epochs, lr x0.1 at epochs 170 and 200,
# 500-iteration warm-up, 8 GPUs x 64 = 512 per step (with another batch set auto_scale_lr = dict(enable=True,
# base_batch_size=512), or keep the lr), validation every 10 epochs on the person boxes of a detector.
#
# Data layout (the official COCO 2017 download, cocodataset.org):
#   data/coco/train2017/*.jpg, data/coco/val2017/*.jpg
#   data/coco/annotations/person_keypoints_train2017.json, person_keypoints_val2017.json
#   data/coco/person_detection_results/COCO_val2017_detections_AP_H_56_person.json (mmpose's person boxes; without it
#   set val_dataloader.dataset.bbox_file=None to validate on the ground-truth boxes)
# Read by mmpose's or mmseg's own APIs (init_model, MMPoseInferencer) a config inheriting `sapiens2::...` needs
# `import sapiens2` first (docs/custom_data.md).
_base_ = ['./sapiens2_0.4b_pose_goliath-1024x768.py']

dataset_type = 'CocoDataset'
data_root = 'data/coco/'
num_keypoints = 17
max_epochs = 210

train_cfg = dict(_delete_=True, type='EpochBasedTrainLoop', max_epochs=max_epochs, val_interval=10)
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=500),
    dict(type='MultiStepLR', milestones=[170, 200], gamma=0.1, by_epoch=True, begin=0, end=max_epochs),
]
auto_scale_lr = dict(enable=False, base_batch_size=512)
default_hooks = dict(checkpoint=dict(by_epoch=True, interval=10, save_best='coco/AP', rule='greater'))
log_processor = dict(by_epoch=True)

model = dict(head=dict(out_channels=num_keypoints))

train_dataloader = dict(
    batch_size=64,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/person_keypoints_train2017.json',
        data_prefix=dict(img='train2017/')))
val_dataloader = dict(
    batch_size=32,
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/person_keypoints_val2017.json',
        bbox_file=data_root + 'person_detection_results/COCO_val2017_detections_AP_H_56_person.json',
        data_prefix=dict(img='val2017/')))
test_dataloader = val_dataloader

val_evaluator = dict(_delete_=True, type='CocoMetric', ann_file=data_root + 'annotations/person_keypoints_val2017.json')
test_evaluator = val_evaluator
