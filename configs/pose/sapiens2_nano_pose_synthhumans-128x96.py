# Tiny 308-keypoint pose recipe on SynthHumans: the 1024x768 config with the nano backbone at patch 8 (a 16x12 token
# grid; patch 16 gives a too coarse 8x6), a 128x96 input and a short, lightly augmented schedule that trains on CPU in
# about three and a half CPU-minutes (tests/pose/test_pose_training.py).
# Generate the data first: python -c "from sapiens2.datasets.synthhumans import ensure_synthhumans as e; e()"
_base_ = ['./sapiens2_0.4b_pose_goliath-1024x768.py', '../_base_/synthhumans_nano.py']

max_iters = 600
val_interval = 600
data_root = 'data/synthhumans/'

train_cfg = dict(max_iters=max_iters, val_interval=val_interval)
# The nano optimiser at lr 3e-2 without layer decay.
optim_wrapper = dict(_base_.nano_optimiser, _delete_=True, paramwise_cfg=dict(layer_decay_rate=1.0),
                     optimizer=dict(type='AdamW', lr=3e-2, betas=(0.9, 0.999), weight_decay=0.01))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=50),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=50, end=max_iters),
]
default_hooks = dict(logger=dict(interval=20), checkpoint=dict(interval=max_iters, save_best=None))

# Heatmaps at 1/4 of the input. Sigma is well above the scaled official value (6 * heatmap_w / 192 = 0.75): with 0.75
# the nano model only learns to predict empty heatmaps within this budget; with 1.5-2 it localises.
codec = dict(type='FastUDPHeatmap', input_size=(96, 128), heatmap_size=(24, 32), sigma=2.0)

model = dict(
    backbone=dict(arch='sapiens2_nano', img_size=(128, 96), patch_size=8, init_cfg=None),
    # 16x12 tokens -> one stride-2 deconv -> 32x24 heatmaps
    head=dict(in_channels=64, deconv_out_channels=(32, ), deconv_kernel_sizes=(4, ), conv_out_channels=(32, ),
              conv_kernel_sizes=(1, ), decoder=codec))

train_pipeline = [
    dict(type='LoadImage'),
    dict(type='GetBBoxCenterScale', padding=1.25),
    dict(type='RandomFlip', direction='horizontal', prob=0.5),
    dict(type='RandomBBoxTransform', shift_factor=0.05, shift_prob=0.3, scale_factor=(0.95, 1.05), scale_prob=1.0,
         rotate_factor=10.0, rotate_prob=0.0),
    dict(type='Sapiens2TopdownAffine', input_size=codec['input_size'], use_udp=True, drop_outside=True),
    dict(type='GenerateTarget', encoder=codec),
    dict(type='PackPoseInputs'),
]
# The base's validation pipeline at this size.
val_pipeline = [dict(step, input_size=codec['input_size']) if step['type'] == 'Sapiens2TopdownAffine' else step
                for step in _base_.val_pipeline]
train_dataloader = dict(
    batch_size=16,
    **_base_.nano_train_loader,
    dataset=dict(data_root=data_root, ann_file='annotations/keypoints308_train.json', pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=16,
    **_base_.nano_val_loader,
    dataset=dict(data_root=data_root, ann_file='annotations/keypoints308_val.json', pipeline=val_pipeline))
test_dataloader = val_dataloader
