# Human alpha matting at 1024x768 without the backbone (each size config takes one from sapiens2::_base_/models/). The
# official training code has no matting recipe; this follows the normal-estimation recipe of the same size (AdamW 5e-4,
# layer decay 0.8, clip 2.0, 20k iterations, bf16, 20 per GPU x 8) with the matting losses of the literature. Data:
# directory datasets (rgb/, alpha/ and optional foreground/, background/, trimap/) under data/matting/. Head widths:
# those of the same-size normal head (an assumption for released weights: a released config.json wins).
_base_ = ['sapiens2::_base_/dense_1024x768.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_matting'], allow_failed_imports=False)

train_data_root = 'data/matting/train'
val_data_root = 'data/matting/val'

model = dict(decode_head=dict(
    type='MattingHead',
    loss_decode=[
        dict(type='MattingAlphaL1Loss', loss_weight=1.0),
        dict(type='MattingAlphaL1Loss', loss_weight=2.0, region='unknown', loss_name='loss_alpha_l1_unknown'),
        dict(type='MattingAlphaGradientLoss', loss_weight=1.0),
        dict(type='MattingLaplacianLoss', loss_weight=1.0),
        dict(type='MattingCompositionLoss', loss_weight=1.0),
        dict(type='MattingForegroundL1Loss', loss_weight=1.0),
    ]))

# Every map moves with the image; the trimap is derived after the geometric transforms (in network pixels).
# No photometric augmentation: the foreground and composition targets are colours of the un-augmented image.
dense_maps = dict(gt_mask='nearest', gt_alpha='bilinear', gt_foreground='bilinear', gt_background='bilinear',
                  gt_image='bilinear', gt_trimap='nearest')
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadMattingAnnotations'),
    dict(_base_.random_scale, map_interpolations=dense_maps),
    _base_.random_crop,
    dict(type='DenseRandomFlip', prob=0.5),
    dict(type='Letterbox', size=_base_.image_size, map_interpolations=dense_maps),
    dict(type='GenerateTrimap', radius=(5, 25), keep_existing=False),
    dict(type='FormatMattingTarget'),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
val_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadMattingAnnotations'),
    dict(type='GenerateTrimap', radius=10),
    dict(type='Letterbox', size=_base_.image_size, test_mode=True),
    dict(type='FormatMattingTarget', with_composition=False),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
train_dataloader = dict(dataset=dict(type='MattingDirDataset', data_root=train_data_root, pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(type='MattingDirDataset', data_root=val_data_root, pipeline=val_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(type='MattingMetric')
test_evaluator = val_evaluator

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')
default_hooks = dict(checkpoint=dict(save_best='matting/sad_unknown'),
                     visualization=dict(type='MattingVisualizationHook', interval=50))
