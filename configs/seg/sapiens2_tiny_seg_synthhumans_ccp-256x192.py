# seg-tiny on real people as well: SynthHumans (all 29 classes) mixed with Clothing Co-Parsing (CCP; Yang, Luo and
# Lin, CVPR 2014: 854 real street photos with hair, clothing, apparel, face and background labelled, the rest
# ignored; tools/dataset_converters/ccp_to_bodyparts.py), continuing from the shipped SynthHumans-trained weights.
# Every batch holds SynthHumans and CCP images in the ratio `source_ratio` (mmdet's MultiSourceSampler over an
# MMEngine ConcatDataset; each source with its own pipeline). Validation stays on SynthHumans (the margin the
# retrained demo model must keep); the real-photo figures come from benchmarks/real_photos.py --ccp.
# Data:
#   python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_demo_postures --num-train 2000 \
#       --num-val 200 --size 384 288 --seed 0 --photo-ratio 0.5 --posture-ratio 0.4
#   python tools/dataset_converters/ccp_to_bodyparts.py --src <clothing-co-parsing> --out data/ccp_bodyparts
_base_ = ['./sapiens2_tiny_seg_synthhumans-256x192.py']

synthhumans_root = 'data/synthhumans_demo_postures'
ccp_root = 'data/ccp_bodyparts'
source_ratio = [1, 1]  # SynthHumans : CCP images per batch
batch_size = 8
load_from = 'sapiens2/demo_models/sapiens2_tiny_seg_synthhumans-256x192.safetensors'

synthhumans_train = dict(
    type={{_base_.dataset_type}},
    data_root=synthhumans_root,
    data_prefix=dict(img_path='train/rgb', seg_map_path='train/seg'),
    pipeline={{_base_.train_pipeline}})
# CCP photos are 550 px wide and about 830 high: the same crops and stretch to 256x192 as inference's resize.
ccp_train = dict(
    type={{_base_.dataset_type}},
    data_root=ccp_root,
    img_suffix='.jpg',
    data_prefix=dict(img_path='train/rgb', seg_map_path='train/seg'),
    pipeline={{_base_.train_pipeline}})
train_dataloader = dict(
    _delete_=True,
    batch_size=batch_size,
    **_base_.cpu_train_loader,
    sampler=dict(type='mmdet.MultiSourceSampler', batch_size=batch_size, source_ratio=source_ratio),
    dataset=dict(type='ConcatDataset', datasets=[synthhumans_train, ccp_train]))
val_dataloader = dict(dataset=dict(data_root=synthhumans_root))
test_dataloader = val_dataloader

# Continued training: peak lr 1e-3 after 20 warm-up iterations, then linear decay (as train_demo_models.py
# --init shipped). 200 iterations: what fitted in the session of 7 December 2026 (1197 s wall at one thread, load
# average about 15 on 2 cores); too short to ship (docs/demo_models.md, "Clothing Co-Parsing").
max_iters = 200
warmup_iters = 20
optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(checkpoint=dict(interval=50, max_keep_ckpts=2, save_best=None), logger=dict(interval=5))
