# matting-tiny on real people as well: SynthHumans (soft alpha, foreground and background) mixed with the person
# masks of Clothing Co-Parsing (CCP; Yang, Luo and Lin, CVPR 2014: 854 real street photos, hard masks of every
# labelled pixel, no foreground or background, so only the alpha losses see them; tools/dataset_converters/
# ccp_to_bodyparts.py), continuing from the shipped SynthHumans-trained weights. Every batch holds SynthHumans and
# CCP images in the ratio `source_ratio` (mmdet's MultiSourceSampler over an MMEngine ConcatDataset; each source
# with its own pipeline). Validation stays on SynthHumans; the real-photo figures come from
# benchmarks/real_photos.py --ccp. A third source, LSP-Extended's sport photos with the soft person masks of a
# real-trained teacher (MediaPipe 0.10.21), brings real backgrounds and soft edges.
# Data: as configs/seg/sapiens2_tiny_seg_synthhumans_ccp_lspet-256x192.py, and for LSPET as
# configs/pose/sapiens2_tiny_pose_synthhumans-lspet-256x192.py, then
#   python tools/dataset_converters/teacher_masks_to_dense.py --split \
#       data/lspet/annotations/lspet_keypoints308_train.json --images data/lspet --masks data/lspet/teacher/masks \
#       --out data/lspet_teacher_dense
_base_ = ['./sapiens2_tiny_matting_synthhumans-256x192.py']

synthhumans_root = 'data/synthhumans_demo_postures'
ccp_root = 'data/ccp_bodyparts'
lspet_root = 'data/lspet_teacher_dense'
source_ratio = [4, 2, 2]  # SynthHumans : CCP : LSPET images per batch
# What the model card says of the real photos (tools/misc/train_demo_models.py --mixed).
real_data = ('the person masks of Clothing Co-Parsing (Yang, Luo and Lin, CVPR 2014; 854 street photos) and the '
             'soft person masks of MediaPipe 0.10.21 (Apache-2.0) on 8,391 LSP-Extended sport photos (Johnson and '
             'Everingham, CVPR 2011)')
batch_size = 8
load_from = 'sapiens2/demo_models/sapiens2_tiny_matting_synthhumans-256x192.safetensors'

synthhumans_train = dict(
    type='MattingDirDataset',
    data_root=f'{synthhumans_root}/train',
    foreground_premultiplied=True,
    pipeline={{_base_.train_pipeline}})
# A hard CCP mask: the derived trimap's unknown band (radius 1-3 at 256x192) covers its rough edge.
ccp_train = dict(type='MattingDirDataset', data_root=f'{ccp_root}/train', pipeline={{_base_.train_pipeline}})
lspet_train = dict(type='MattingDirDataset', data_root=lspet_root, pipeline={{_base_.train_pipeline}})
train_dataloader = dict(
    _delete_=True,
    batch_size=batch_size,
    **_base_.cpu_train_loader,
    sampler=dict(type='mmdet.MultiSourceSampler', batch_size=batch_size, source_ratio=source_ratio),
    dataset=dict(type='ConcatDataset', datasets=[synthhumans_train, ccp_train, lspet_train]))
val_dataloader = dict(dataset=dict(data_root=f'{synthhumans_root}/val'))
test_dataloader = val_dataloader

# Continued training: peak lr 1e-3 after 20 warm-up iterations, then linear decay (as train_demo_models.py
# --init shipped). Not trained yet (the session of 7 December 2026 ran out of time after seg).
max_iters = 800
warmup_iters = 20
optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(checkpoint=dict(interval=200, max_keep_ckpts=2, save_best=None))
