# Sapiens2-0.4B, 308-keypoint top-down pose at 1024x768 (H x W): the official recipe.
# The official training data is internal; point data_root / ann_file at COCO-style 308-keypoint files
# (see docs/pose.md). The tiny SynthHumans, COCO and custom configs inherit this file, the other sizes its base.
# A config inheriting this via `sapiens2::...` needs `import sapiens2` before mmpose/mmseg read it (docs/inference.md).
_base_ = ['./_base_/pose_goliath-1024x768.py', '../_base_/models/sapiens2_0.4b.py',
          '../_base_/schedules/linear_10k.py']

model = dict(backbone=_base_.backbone)
