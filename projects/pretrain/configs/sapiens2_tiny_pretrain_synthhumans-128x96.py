# Pretraining of the tiny backbone from scratch on unlabeled SynthHumans images (CPU scale): the paper's objective
# (sparse MAE + DINO-style self-distillation + KoLeo, weights 1.0 / 0.4 / 0.04) at 128x96 with 8-pixel patches (a
# 16x12 token grid, the grid of the tiny task recipes), 2 local 64x48 views, batch 32, with the from-scratch defaults
# (LayerScale init 1, teacher temperature 0.02, see _base_/pretrain_from_scratch.py) and 64 prototypes for 4000
# images: the recipe that passes the health check (docs/pretraining.md). benchmarks/pretrain_probe.py pins the
# official values for its variants of the paper's objective.
# Images: python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_unlabeled --rgb-only \
#     --num-train 4000 --num-val 16 --size 128 96 --seed 1
_base_ = ['./_base_/pretrain_from_scratch.py']

image_size = (128, 96)
local_size = (64, 48)
num_local = 2
max_iters = 300
warmup_iters = 30

model = dict(
    backbone=dict(arch='sapiens2_tiny', img_size=image_size, patch_size=8),
    mae_decoder=dict(embed_dims=128, num_layers=2, num_heads=4),
    dino_head=dict(num_prototypes=64, hidden_dim=512, bottleneck_dim=128),
    dino_loss=dict(warmup_iters=warmup_iters))

# The base's pipeline at these sizes.
train_pipeline = [dict(step, global_size=image_size, local_size=local_size, num_local=num_local)
                  if step['type'] == 'MultiViewCrop' else step for step in _base_.train_pipeline]
train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    persistent_workers=False,
    pin_memory=False,
    dataset=dict(data_root='data/synthhumans_unlabeled/train/rgb', verify=True, pipeline=train_pipeline))
train_cfg = dict(max_iters=max_iters)

optim_wrapper = dict(_delete_=True, **_base_.fp32_optimiser)
param_scheduler = [dict(_base_.param_scheduler[0], end=warmup_iters),
                   dict(_base_.param_scheduler[1], T_max=max_iters - warmup_iters, eta_min=1e-6, begin=warmup_iters,
                        end=max_iters)]
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_iters, max_keep_ckpts=1))
