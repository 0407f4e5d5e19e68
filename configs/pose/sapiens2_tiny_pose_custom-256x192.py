# Small own-layout pose model for CPUs (tests, trying docs/custom_data.md): the tiny SynthHumans recipe
# (sapiens2_tiny_pose_synthhumans-256x192.py; its shipped model is a good load_from) on the data and metainfo file of
# configs/_base_/datasets/custom_keypoints.py (data layout and the three settings there). SynthHumans in an own layout:
# python tools/dataset_converters/synthhumans_to_layout.py --keypoints FILE --out DIR (docs/custom_data.md).
_base_ = ['./sapiens2_tiny_pose_synthhumans-256x192.py', '../_base_/datasets/custom_keypoints.py']

data_root = None  # custom_data_root is the data folder (a data_root set in your file would not reach the dataloaders)
dataset_type = 'CocoDataset'
model = dict(head=dict(out_channels=None))  # the number of keypoints of custom_metainfo
# The 308-keypoint recipe without its face weights (PartKeypointWeights names the 308 layout's parts).
train_pipeline = [step for step in _base_.train_pipeline if step['type'] != 'PartKeypointWeights']
train_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_keypoints_train, pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_keypoints_val, pipeline=_base_.val_pipeline))
test_dataloader = val_dataloader
val_evaluator = [_base_.custom_keypoints_evaluator, dict(type='PCKAccuracy', thr=0.05, norm_item='bbox')]
test_evaluator = val_evaluator
