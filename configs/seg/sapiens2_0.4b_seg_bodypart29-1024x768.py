# Sapiens2-0.4B body-part segmentation (29 classes) at 1024x768, the official recipe.
# Global batch in the paper: 12 per GPU x 8 GPUs.
# A config inheriting this via `sapiens2::...` needs `import sapiens2` before mmpose/mmseg read it (docs/inference.md).
_base_ = ['./_base_/seg_bodypart29-1024x768.py', '../_base_/models/sapiens2_0.4b.py',
          '../_base_/schedules/linear_20k.py']

model = dict(backbone=_base_.backbone)
