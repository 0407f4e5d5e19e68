# Sapiens2-0.4B human parsing on LIP (Look Into Person: 20 classes, 30,462 training and 10,000 validation images) at
# 1024x768: the official 0.4b optimiser, layer decay, head, losses and augmentation of
# sapiens2_0.4b_seg_bodypart29-1024x768.py with mmseg's LIPDataset (its 20 classes and palette), 20 output classes,
# uniform class weights, the LIP left/right pairs swapped by the flips, and mIoU. Schedule: as many images as mmseg's
# LIP PSPNet (160k iterations x 16 images), at the official batch (8 GPUs x 12): 27k iterations.
#
# Data layout (that of mmseg's LIP configs; LIP from sysu-hcp.net/lip):
#   data/LIP/train_images/*.jpg, data/LIP/train_segmentations/*.png
#   data/LIP/val_images/*.jpg,   data/LIP/val_segmentations/*.png      (label ids 0..19, 255 = ignore)
# Read by mmseg's own APIs (init_model, MMSegInferencer) a config inheriting `sapiens2::...` needs `import sapiens2`
# first (docs/custom_data.md).
_base_ = ['./sapiens2_0.4b_seg_bodypart29-1024x768.py']

dataset_type = 'LIPDataset'
data_root = 'data/LIP'
num_classes = 20
# Left-arm/Right-arm, Left-leg/Right-leg, Left-shoe/Right-shoe (LIPDataset.METAINFO classes 14-19).
swap_seg_labels = [[14, 15], [16, 17], [18, 19]]
max_iters = 27000
warmup_iters = 500

model = dict(decode_head=dict(
    num_classes=num_classes,
    loss_decode=[
        dict(type='Sapiens2SegCrossEntropyLoss', class_weight=None, average='weighted', loss_weight=1.0),
        dict(type='Sapiens2DiceLoss', loss_weight=1.0),
    ]))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=3000)
default_hooks = dict(checkpoint=dict(interval=3000))

# The official pipeline, with the LIP pairs swapped by the flip.
train_pipeline = [
    dict(type='RandomFlip', prob=0.5, direction='horizontal', swap_seg_labels=swap_seg_labels)
    if step['type'] == 'RandomFlip' else step for step in _base_.train_pipeline
]
tta_model = dict(swap_seg_labels=swap_seg_labels)
train_dataloader = dict(
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix=dict(img_path='train_images', seg_map_path='train_segmentations'),
        pipeline=train_pipeline))
val_dataloader = dict(
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix=dict(img_path='val_images', seg_map_path='val_segmentations')))
test_dataloader = val_dataloader
