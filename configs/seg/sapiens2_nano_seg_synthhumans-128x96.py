# Tiny body-part segmentation on SynthHumans (sapiens2.datasets.synthhumans) for tests and demos on a CPU:
# the nano backbone from scratch on 128x96 inputs with 8-pixel patches (16x12 tokens), and a narrow head with two
# deconvolutions (x4, 64x48 logits).
# Training labels are rescaled to the logit size (mmseg SegRescale), which keeps the loss cheap; validation scores
# the logits resized back to the original label size. Losses (weighted CE + Dice) are those of the full configs.
_base_ = ['./sapiens2_0.4b_seg_bodypart29-1024x768.py', '../_base_/synthhumans_nano.py']

data_root = 'data/synthhumans'
image_size = (128, 96)  # (H, W)
embed_dims = 64

model = dict(
    data_preprocessor=dict(size=image_size),
    backbone=dict(arch='sapiens2_nano', img_size=image_size, patch_size=8, with_cp=False, init_cfg=None),
    decode_head=dict(
        in_channels=embed_dims,
        deconv_out_channels=(64, 32),
        conv_out_channels=(32, ),
        channels=32))

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal', swap_seg_labels={{_base_.swap_seg_labels}}),
    dict(type='Resize', scale=(image_size[1], image_size[0]), keep_ratio=False),
    dict(type='SegRescale', scale_factor=0.5),
    dict(type='PackSegInputs'),
]
# The base's test pipeline at this size.
test_pipeline = [dict(step, scale=(image_size[1], image_size[0])) if step['type'] == 'Resize' else step
                 for step in _base_.test_pipeline]
tta_pipeline = [test_pipeline[0], dict(type='TestTimeAug', transforms=[[test_pipeline[1]], {{_base_.tta_flips}},
                                                                        [test_pipeline[2]], [test_pipeline[3]]])]
train_dataloader = dict(
    batch_size=4,
    **_base_.nano_train_loader,
    dataset=dict(
        data_root=data_root, data_prefix=dict(img_path='train/rgb', seg_map_path='train/seg'),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=16,
    **_base_.nano_val_loader,
    dataset=dict(
        data_root=data_root, data_prefix=dict(img_path='val/rgb', seg_map_path='val/seg'), pipeline=test_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(_delete_=True, **_base_.nano_optimiser)

max_iters = 800
warmup_iters = 15
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(checkpoint=dict(interval=max_iters), logger=dict(interval=50))
