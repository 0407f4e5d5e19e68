# pose-tiny on rendered and real people: SynthHumans (all 308 points) mixed with LSP-Extended (Johnson and Everingham,
# CVPR 2011: 10,000 Flickr sport photos, one person each, 12 limb joints and the neck labelled by people) whose face,
# foot and hand points come from a real-trained teacher (MediaPipe 0.10.21 Holistic) where it is confident and agrees
# with the labels. Continues from the shipped SynthHumans weights; the SynthHumans validation split measures it.
# Data (docs/demo_models.md):
#   python tools/dataset_converters/make_synthhumans.py --out data/synthhumans_demo_postures --num-train 2000 \
#       --num-val 200 --size 384 288 --seed 0 --photo-ratio 0.5 --posture-ratio 0.4
#   python tools/dataset_converters/lspet_to_coco.py --lspet data/lspet --out data/lspet/annotations
#   .venv-teacher/bin/python tools/dataset_converters/mediapipe_teacher.py --images data/lspet/images \
#       --out data/lspet/teacher
#   python tools/dataset_converters/merge_teacher_keypoints.py \
#       --labels data/lspet/annotations/lspet_keypoints308_train.json \
#       --teacher data/lspet/teacher/teacher_keypoints308.json --out data/lspet/annotations/lspet_teacher_train.json
_base_ = ['./sapiens2_tiny_pose_synthhumans-256x192.py', '../_base_/datasets/keypoints308.py']

synthhumans_root = 'data/synthhumans_demo_postures/'
lspet_root = 'data/lspet/'  # images/im00001.jpg ... (the LSPET folder) and annotations/
lspet_ann_file = 'annotations/lspet_teacher_train.json'  # or lspet_keypoints308_train.json: the labels alone
# Each source's share: mmpose's CombinedDataset takes int(size x factor) samples of each per epoch (a factor above 1
# repeats samples). 2000 SynthHumans images hold about 3500 person crops, LSPET's training split 9500 people: these
# factors give about 7000 of each, half and half.
synthhumans_ratio = 2.0
lspet_ratio = 0.75
# What the model card says of the real photos (tools/misc/train_demo_models.py --mixed).
real_data = ('LSP-Extended (Johnson and Everingham, CVPR 2011; github.com/axelcarlier/lsp): 9,500 sport photos, '
             '12 limb joints and the neck labelled on Mechanical Turk, the face, foot and hand points added by '
             'MediaPipe 0.10.21 Holistic (Apache-2.0) where it was confident and agreed with the labels')

load_from = 'sapiens2/demo_models/sapiens2_tiny_pose_synthhumans-256x192.safetensors'
# 3000 iterations of batch 8 (docs/demo_models.md: its time and figures).
max_iters = 3000
warmup_iters = 20
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
optim_wrapper = dict(optimizer=dict(lr=1e-3))  # the shipped model's continuation rate (train_demo_models.py)
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
default_hooks = dict(checkpoint=dict(interval=500, max_keep_ckpts=2))

train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='CombinedDataset',
        metainfo=_base_.dataset_info,
        datasets=[
            dict(type='Keypoints308CocoDataset', data_root=synthhumans_root, data_prefix=dict(img=''),
                 ann_file='annotations/keypoints308_train.json', pipeline=[]),
            dict(type='Keypoints308CocoDataset', data_root=lspet_root, data_prefix=dict(img=''),
                 ann_file=lspet_ann_file, pipeline=[]),
        ],
        sample_ratio_factor=[synthhumans_ratio, lspet_ratio],
        pipeline=_base_.train_pipeline))
val_dataloader = dict(dataset=dict(data_root=synthhumans_root))
test_dataloader = val_dataloader
