# seg-tiny on real people as well: SynthHumans (all 29 classes) mixed with Clothing Co-Parsing (CCP; Yang, Luo and
# Lin, CVPR 2014: 854 real street photos with hair, clothing, apparel, face and background labelled, the rest
# ignored; tools/dataset_converters/ccp_to_bodyparts.py) and with the sure background of LSP-Extended's sport photos
# (Johnson and Everingham, CVPR 2011: where a real-trained teacher, MediaPipe 0.10.21, sees no person; the rest
# ignored; tools/dataset_converters/teacher_masks_to_dense.py), continuing from the shipped SynthHumans-trained
# weights. CCP alone taught a position prior (the lower half of a frame is trousers, grass included:
# docs/demo_models.md); the sport photos' grass, courts and crowds are background.
# Every batch holds the sources' images in the ratio `source_ratio` (mmdet's MultiSourceSampler over an MMEngine
# ConcatDataset; each source with its own pipeline). Validation stays on SynthHumans (the margin the retrained demo
# model must keep); the real-photo figures come from benchmarks/real_photos.py --ccp.
# Data:
#   python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_demo_postures --num-train 2000 \
#       --num-val 200 --size 384 288 --seed 0 --photo-ratio 0.5 --posture-ratio 0.4
#   python tools/dataset_converters/ccp_to_bodyparts.py --src <clothing-co-parsing> --out data/ccp_bodyparts
#   LSPET and its teacher masks as in configs/pose/sapiens2_tiny_pose_synthhumans-lspet-256x192.py, then
#   python tools/dataset_converters/teacher_masks_to_dense.py --split \
#       data/lspet/annotations/lspet_keypoints308_train.json --images data/lspet --masks data/lspet/teacher/masks \
#       --out data/lspet_teacher_dense
_base_ = ['./sapiens2_tiny_seg_synthhumans-256x192.py']

synthhumans_root = 'data/synthhumans_demo_postures'
ccp_root = 'data/ccp_bodyparts'
lspet_root = 'data/lspet_teacher_dense'
source_ratio = [4, 2, 2]  # SynthHumans : CCP : LSPET images per batch
# What the model card says of the real photos (tools/misc/train_demo_models.py --mixed).
real_data = ('Clothing Co-Parsing (Yang, Luo and Lin, CVPR 2014; github.com/bearpaw/clothing-co-parsing): 854 '
             'street photos with pixel labels of hair, skin, garments and shoes, mapped to the 29 classes; and the '
             'background of 8,391 LSP-Extended sport photos (Johnson and Everingham, CVPR 2011) where MediaPipe '
             '0.10.21 (Apache-2.0) sees no person')
batch_size = 8
load_from = 'sapiens2/demo_models/sapiens2_tiny_seg_synthhumans-256x192.safetensors'

synthhumans_train = dict(
    type={{_base_.dataset_type}},
    data_root=synthhumans_root,
    data_prefix=dict(img_path='train/rgb', seg_map_path='train/seg'),
    pipeline={{_base_.train_pipeline}})
# CCP photos are 550 px wide and about 830 high: the same crops and stretch to 256x192 as inference's resize.
ccp_train = dict(synthhumans_train, data_root=ccp_root, img_suffix='.jpg')
lspet_train = dict(ccp_train, data_root=lspet_root, data_prefix=dict(img_path='rgb', seg_map_path='seg'))
train_dataloader = dict(
    _delete_=True,
    batch_size=batch_size,
    **_base_.cpu_train_loader,
    sampler=dict(type='mmdet.MultiSourceSampler', batch_size=batch_size, source_ratio=source_ratio),
    dataset=dict(type='ConcatDataset', datasets=[synthhumans_train, ccp_train, lspet_train]))
val_dataloader = dict(dataset=dict(data_root=synthhumans_root))
test_dataloader = val_dataloader

# Continued training: peak lr 1e-3 after 20 warm-up iterations, then linear decay (as train_demo_models.py
# --init shipped), 1800 iterations of batch 8 (docs/demo_models.md, "Clothing Co-Parsing": its time and figures).
max_iters = 1800
warmup_iters = 20
optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(checkpoint=dict(interval=250, max_keep_ckpts=2, save_best=None), logger=dict(interval=20))
