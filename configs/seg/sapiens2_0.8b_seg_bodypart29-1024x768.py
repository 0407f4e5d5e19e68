# Sapiens2-0.8B body-part segmentation at 1024x768: 30k iterations, fp32 (official DDP fp32), 5 per GPU x 8.
_base_ = ['./_base_/seg_bodypart29-1024x768.py', '../_base_/models/sapiens2_0.8b.py',
          '../_base_/schedules/linear_30k.py']

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=1280))
optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    constructor='Sapiens2LayerDecayOptimWrapperConstructor',
    optimizer=dict(type='AdamW', lr=5e-4, betas=(0.9, 0.999), weight_decay=0.1),
    paramwise_cfg=dict(layer_decay_rate=0.85),
    clip_grad=dict(max_norm=4.0, norm_type=2))
train_dataloader = dict(batch_size=5, num_workers=4)
