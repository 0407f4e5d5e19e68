# Sapiens2-0.4b, own keypoint layout at 1024x768: the official 0.4b recipe of sapiens2_0.4b_pose_goliath-1024x768.py
# (optimiser, layer decay, head, schedule, augmentation) on the data and metainfo file of
# configs/_base_/datasets/custom_keypoints.py (data layout and the three settings there; docs/custom_data.md). Your
# config:
#   _base_ = ['sapiens2::pose/sapiens2_0.4b_pose_custom-1024x768.py']
#   custom_metainfo = 'my_keypoints.py'
#   custom_data_root = 'data/my_keypoints/'
#   load_from = 'pose-0.4b'
# Read by mmpose's own APIs (init_model, MMPoseInferencer) a config inheriting `sapiens2::...` needs
# `import sapiens2` first.
_base_ = ['./sapiens2_0.4b_pose_goliath-1024x768.py', '../_base_/datasets/custom_keypoints.py']

data_root = None  # custom_data_root is the data folder (a data_root set in your file would not reach the dataloaders)
dataset_type = 'CocoDataset'
model = dict(head=dict(out_channels=None))  # the number of keypoints of custom_metainfo
train_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_keypoints_train, pipeline=_base_.train_pipeline))
val_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_keypoints_val, pipeline=_base_.val_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(_delete_=True, **_base_.custom_keypoints_evaluator)
test_evaluator = val_evaluator
