# Small COCO-WholeBody 133-keypoint pose model for CPUs: sapiens2_tiny_pose_coco-256x192.py with mmpose's
# CocoWholeBodyDataset and its metainfo, 133 output channels and whole-body AP (CocoWholeBodyMetric). The full
# configs: sapiens2_{0.4b,1b}_pose_coco-wholebody-1024x768.py. Data: SynthHumans converted to COCO-WholeBody (the
# body/foot/face/hand fields of COCO-WholeBody v1.0):
#   python tools/dataset_converters/synthhumans_to_layout.py --keypoints coco_wholebody \
#       --out data/synthhumans_coco_wholebody
_base_ = ['./sapiens2_tiny_pose_coco-256x192.py']

dataset_type = 'CocoWholeBodyDataset'
data_root = 'data/synthhumans_coco_wholebody/'
num_keypoints = 133

model = dict(head=dict(out_channels=num_keypoints))
train_dataloader = dict(dataset=dict(type=dataset_type, data_root=data_root))
val_dataloader = dict(dataset=dict(type=dataset_type, data_root=data_root))
test_dataloader = val_dataloader
val_evaluator = [dict(type='CocoWholeBodyMetric'), dict(type='PCKAccuracy', thr=0.05, norm_item='bbox')]
test_evaluator = val_evaluator
