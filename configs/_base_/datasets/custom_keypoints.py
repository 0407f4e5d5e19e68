# Own keypoint layout from one metainfo file (docs/custom_data.md). A config inheriting a `*_pose_custom-*` config
# sets three things:
#   custom_metainfo = 'my_keypoints.py'     # mmpose's dataset_info format (keypoint_info with swap partners,
#                                           # skeleton_info, joint_weights, sigmas); a path, or sapiens2::/mmpose::
#   custom_data_root = 'data/my_keypoints/'
#   load_from = 'pose-0.4b'                 # optional: fine-tune a pose model (its head is re-initialised)
# When the config is loaded, sapiens2 writes them where they belong (sapiens2/utils/custom_layout.py): every
# dataloader's dataset gets data_root and metainfo=dict(from_file=...) (mmpose's CocoDataset reads it: names,
# skeleton, flip pairs, sigmas), and the head its out_channels (the number of keypoints).
#
# Data layout (COCO keypoint files, one person per annotation):
#   <custom_data_root>/images/...              the images; file_name in the JSON files is relative to images/
#   <custom_data_root>/annotations/train.json  images: id, file_name, width, height;
#   <custom_data_root>/annotations/val.json    annotations: id, image_id, category_id 1, bbox [x, y, w, h],
#                                              keypoints [x1, y1, v1, ...] (K x 3, v: 0 unlabelled, 1 occluded,
#                                              2 visible), num_keypoints, area, iscrowd 0; categories: [{id: 1, ...}]
# Validation uses the ground-truth boxes and reports COCO AP with the file's sigmas (mmpose's CocoMetric; the ground
# truth is val.json).
custom_metainfo = 'mmpose::_base_/datasets/coco.py'  # COCO-17 until you set yours
custom_data_root = 'data/custom_keypoints/'
custom_keypoints_train = dict(
    type='CocoDataset', data_mode='topdown', ann_file='annotations/train.json', data_prefix=dict(img='images/'))
custom_keypoints_val = dict(
    type='CocoDataset', data_mode='topdown', ann_file='annotations/val.json', data_prefix=dict(img='images/'),
    test_mode=True)
custom_keypoints_evaluator = dict(type='CocoMetric')
