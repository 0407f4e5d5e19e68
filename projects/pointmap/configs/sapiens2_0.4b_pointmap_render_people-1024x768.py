# Sapiens2-0.4B canonical pointmap + focal scale at 1024x768, the official recipe: 20k iterations,
# fp32, 8 images per GPU x 8 GPUs in the paper. Data: directory datasets (rgb/, mask/, depth/,
# camera_intrinsics/, camera_extrinsics/) under data/pointmap/.
_base_ = ['./_base_/pointmap_1024x768.py', 'sapiens2::_base_/models/sapiens2_0.4b.py',
          'sapiens2::_base_/schedules/linear_20k.py']

model = dict(backbone=_base_.backbone)
