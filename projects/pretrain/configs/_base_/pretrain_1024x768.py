# Sapiens2 pretraining recipe of the paper at 1024x768 (H x W): sparse MAE + DINO-style self-distillation + KoLeo.
# The paper's data (1B filtered human images) is internal: point data_root at a folder of images (any depth).
# Sizes inherit this file and set the arch, the MAE decoder and the batch size.
_base_ = ['sapiens2::_base_/default_runtime.py']

custom_imports = dict(imports=['sapiens2', 'sapiens2_pretrain'], allow_failed_imports=False)
default_scope = 'sapiens2'

image_size = (1024, 768)
local_size = (384, 288)  # 3/8 of the global side
num_local = 4
max_iters = 500000
warmup_iters = 1000

model = dict(
    type='Sapiens2Pretrainer',
    data_preprocessor=dict(
        type='MultiViewDataPreprocessor', mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True),
    backbone=dict(
        type='Sapiens2', arch='sapiens2_1b', img_size=image_size, patch_size=16, out_type='raw', final_norm=True,
        with_cls_token=True),
    mae_decoder=dict(type='MAEDecoder', embed_dims=512, num_layers=8, num_heads=16),
    dino_head=dict(type='DINOHead', num_prototypes=65536, hidden_dim=2048, bottleneck_dim=256, num_layers=3),
    mask_generator=dict(type='MixedMaskGenerator', mask_ratio=0.75, block_prob=0.5),
    mae_loss=dict(type='MAELoss', norm_pix=True),
    dino_loss=dict(
        type='DINOLoss', student_temp=0.1, teacher_temp=0.07, warmup_teacher_temp=0.065, warmup_iters=warmup_iters,
        center_momentum=0.9),
    koleo_loss=dict(type='KoLeoLoss'),
    loss_weights=dict(mae=1.0, dino=0.4, koleo=0.04))

train_pipeline = [
    dict(type='LoadImageOrSkip'),
    dict(type='MultiViewCrop', global_size=image_size, local_size=local_size, num_local=num_local),
    dict(type='PackMultiViewInputs'),
]
train_dataloader = dict(
    batch_size=4,
    num_workers=8,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    collate_fn=dict(type='pseudo_collate'),
    # verify=False: checking every file of a huge folder up front is too slow; unreadable files are still
    # skipped and reported when the pipeline fails to load them.
    dataset=dict(type='ImageFolderDataset', data_root='data/pretrain_images', verify=False, pipeline=train_pipeline))

train_cfg = dict(type='IterBasedTrainLoop', max_iters=max_iters)
val_cfg = None
val_dataloader = None
val_evaluator = None
test_cfg = None
test_dataloader = None
test_evaluator = None

# AdamW (0.9, 0.95), lr 1e-4, wd 0.05 without decay on norms, biases, LayerScale (all 1-D parameters), positional
# and special tokens; bf16 autocast on GPU (fp32: fp32_optimiser below); global grad clip 5.0.
optim_wrapper = dict(
    type='AmpOptimWrapper',
    dtype='bfloat16',
    constructor='StudentOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=1e-4, betas=(0.9, 0.95), weight_decay=0.05, fused=True),
    paramwise_cfg=dict(
        norm_decay_mult=0.0,
        bias_decay_mult=0.0,
        flat_decay_mult=0.0,
        custom_keys={
            'cls_token': dict(decay_mult=0.0),
            'storage_tokens': dict(decay_mult=0.0),
            'mask_token': dict(decay_mult=0.0),
            'pos_embed': dict(decay_mult=0.0),
        }),
    clip_grad=dict(max_norm=5.0, norm_type=2))
# fp32 for the small configs that train on a CPU: lr 1e-3, no fused kernel.
fp32_optimiser = dict(type='OptimWrapper', constructor='StudentOptimWrapperConstructor',
                          optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.95), weight_decay=0.05),
                          paramwise_cfg=optim_wrapper['paramwise_cfg'], clip_grad=optim_wrapper['clip_grad'])
# 1000-iteration linear warm-up, then cosine decay to 1e-7.
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='CosineAnnealingLR', T_max=max_iters - warmup_iters, eta_min=1e-7, by_epoch=False, begin=warmup_iters,
         end=max_iters),
]

# teacher <- 0.992 * teacher + 0.008 * student after every optimizer step.
custom_hooks = [dict(type='TeacherEMAHook', momentum=0.992)]
default_hooks = dict(checkpoint=dict(interval=5000, max_keep_ckpts=3))
visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')])
# Training health (Sapiens2Pretrainer.loss): average the monitors over the logging window like the losses.
log_processor = dict(
    mean_pattern=r'.*(loss|time|data_time|grad_norm|mae|koleo|entropy|prototypes|spread|center_norm).*')
