# Sapiens2-0.4B surface normals at 1024x768, the official recipe: 20k iterations, bf16,
# 20 images per GPU x 8 GPUs in the paper. Data: directory datasets (rgb/, mask/, normal/) under data/normal/.
_base_ = ['./_base_/normal_1024x768.py', 'sapiens2::_base_/models/sapiens2_0.4b.py',
          'sapiens2::_base_/schedules/linear_20k.py']

model = dict(backbone=_base_.backbone)
