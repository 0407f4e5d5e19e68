# Tiny pretraining on a SynthHumans image folder (CPU-friendly): the same objective at 128x96 with a nano backbone.
# Generate the images first: python -c "from sapiens2.datasets.synthhumans import ensure_synthhumans as e; e()"
_base_ = ['./_base_/pretrain_1024x768.py']

image_size = (128, 96)
local_size = (64, 48)  # 3/8 of the side would not be a multiple of the patch size at this scale
num_local = 2
max_iters = 200
warmup_iters = 10

model = dict(
    backbone=dict(arch='sapiens2_nano', img_size=image_size),
    mae_decoder=dict(embed_dims=64, num_layers=2, num_heads=4),
    dino_head=dict(num_prototypes=256, hidden_dim=256, bottleneck_dim=64),
    dino_loss=dict(warmup_iters=warmup_iters))

# The base's pipeline at these sizes.
train_pipeline = [dict(step, global_size=image_size, local_size=local_size, num_local=num_local)
                  if step['type'] == 'MultiViewCrop' else step for step in _base_.train_pipeline]
train_dataloader = dict(
    batch_size=8,
    num_workers=2,
    persistent_workers=True,
    pin_memory=False,
    dataset=dict(data_root='data/synthhumans/train/rgb', verify=True, pipeline=train_pipeline))
train_cfg = dict(max_iters=max_iters)

optim_wrapper = dict(_delete_=True, **_base_.fp32_optimiser)
param_scheduler = [dict(_base_.param_scheduler[0], end=warmup_iters),
                   dict(_base_.param_scheduler[1], T_max=max_iters - warmup_iters, begin=warmup_iters, end=max_iters)]
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=100, max_keep_ckpts=2))
