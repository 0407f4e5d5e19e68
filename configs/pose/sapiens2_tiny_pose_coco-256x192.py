# Small COCO-17 pose model for CPUs (tests, trying the COCO configs on a laptop): the tiny SynthHumans recipe
# (sapiens2_tiny_pose_synthhumans-256x192.py) with mmpose's CocoDataset and its COCO-17 metainfo, 17 output channels,
# COCO AP (CocoMetric, ground truth: val.json) and PCK@0.05. The full configs: sapiens2_{0.4b,1b}_pose_coco-1024x768.py.
# Data: SynthHumans converted to COCO-17 in the layout of configs/_base_/datasets/custom_keypoints.py (images/,
# annotations/{train,val}.json):
#   python tools/dataset_converters/synthhumans_to_layout.py --keypoints coco17 --out data/synthhumans_coco17
_base_ = ['./sapiens2_tiny_pose_synthhumans-256x192.py']

dataset_type = 'CocoDataset'
data_root = 'data/synthhumans_coco17/'
num_keypoints = 17

model = dict(head=dict(out_channels=num_keypoints))
# The 308-keypoint recipe without its face weights (PartKeypointWeights names the 308 layout's parts).
train_pipeline = [step for step in _base_.train_pipeline if step['type'] != 'PartKeypointWeights']
train_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, ann_file='annotations/train.json',
                 data_prefix=dict(img='images/'), pipeline=train_pipeline))
val_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, ann_file='annotations/val.json',
                 data_prefix=dict(img='images/')))
test_dataloader = val_dataloader
val_evaluator = [dict(type='CocoMetric'), dict(type='PCKAccuracy', thr=0.05, norm_item='bbox')]
test_evaluator = val_evaluator
