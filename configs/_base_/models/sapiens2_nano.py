# Sapiens2-nano for tests and demos on a CPU: 128x96 inputs in 8-pixel patches (a 16x12 token grid), trained from
# scratch (no pretraining checkpoint).
_base_ = ['./sapiens2.py']

backbone = dict(arch='sapiens2_nano', img_size=(128, 96), patch_size=8, init_cfg=None)
