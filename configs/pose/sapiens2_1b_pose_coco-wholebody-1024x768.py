# Sapiens2-1B, COCO-WholeBody 133 keypoints at 1024x768: sapiens2_0.4b_pose_coco-wholebody-1024x768.py (data layout
# and schedule there) with the 1b backbone, head widths, layer decay and clip of sapiens2_1b_pose_goliath-1024x768.py
# (tests/pose/test_public_pose_configs.py checks that they agree).
_base_ = ['./sapiens2_0.4b_pose_coco-wholebody-1024x768.py', '../_base_/strategies/fsdp.py', './_base_/pose_1b.py']
runner_type = 'FlexibleRunner'  # FSDP (configs/_base_/strategies/fsdp.py); launch with tools/dist_train.sh

pretrained = 'pretrain-1b'
optim_wrapper = _base_.pose_1b_optim
model = dict(backbone=dict(arch='sapiens2_1b', init_cfg=dict(checkpoint=pretrained)), head=_base_.pose_1b_head)
