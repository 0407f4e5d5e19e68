# A user's COCO-17 fine-tune config written against the previous release's tiny 308-keypoint config, kept as a user
# wrote it (tests/tools/test_own_layout_training.py trains it): mmpose's CocoDataset, the head's 17 channels and COCO
# AP; the 308-keypoint training pipeline is inherited as it is (PartKeypointWeights included, which the tiny config
# gained later and which follows the dataset's COCO-17 layout).
_base_ = ['sapiens2::pose/sapiens2_tiny_pose_synthhumans-256x192.py']

data_root = 'data/synthhumans_coco17/'
model = dict(head=dict(out_channels=17))
train_dataloader = dict(dataset=dict(type='CocoDataset', data_root=data_root, ann_file='annotations/train.json',
                                     data_prefix=dict(img='images/')))
val_dataloader = dict(dataset=dict(type='CocoDataset', data_root=data_root, ann_file='annotations/val.json',
                                   data_prefix=dict(img='images/')))
test_dataloader = val_dataloader
val_evaluator = [dict(type='CocoMetric')]
test_evaluator = val_evaluator
