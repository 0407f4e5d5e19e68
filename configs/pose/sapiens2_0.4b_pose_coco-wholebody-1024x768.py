# Sapiens2-0.4B, COCO-WholeBody 133 keypoints (17 body, 6 feet, 68 face, 2 x 21 hands) at 1024x768: the COCO-17
# recipe of sapiens2_0.4b_pose_coco-1024x768.py (the official 0.4b optimiser, layer decay and head; ViTPose's
# 210-epoch schedule and batch) with 133 output channels, mmpose's CocoWholeBodyDataset with its metainfo (mmpose's
# configs/_base_/datasets/coco_wholebody.py) and whole-body AP (mmpose's CocoWholeBodyMetric: body, foot, face,
# left/right hand and whole-body AP).
#
# Data layout (COCO 2017 images with the COCO-WholeBody v1.0 annotations, github.com/jin-s13/COCO-WholeBody):
#   data/coco/train2017/*.jpg, data/coco/val2017/*.jpg
#   data/coco/annotations/coco_wholebody_train_v1.0.json, coco_wholebody_val_v1.0.json
#   data/coco/person_detection_results/COCO_val2017_detections_AP_H_56_person.json (or bbox_file=None)
_base_ = ['./sapiens2_0.4b_pose_coco-1024x768.py']

dataset_type = 'CocoWholeBodyDataset'
data_root = 'data/coco/'
num_keypoints = 133

default_hooks = dict(checkpoint=dict(save_best='coco-wholebody/AP'))
model = dict(head=dict(out_channels=num_keypoints))
train_dataloader = dict(dataset=dict(type=dataset_type, ann_file='annotations/coco_wholebody_train_v1.0.json'))
val_dataloader = dict(dataset=dict(type=dataset_type, ann_file='annotations/coco_wholebody_val_v1.0.json'))
test_dataloader = val_dataloader

val_evaluator = dict(type='CocoWholeBodyMetric', ann_file=data_root + 'annotations/coco_wholebody_val_v1.0.json')
test_evaluator = val_evaluator
