# 29-class body-part segmentation data (classes and palette: sapiens2/metainfo/seg29.json).
# Layout: <data_root>/images/{train,val}/<name>.png and <data_root>/annotations/{train,val}/<name>.png (29 ids,
# 255 = ignore). Label maps in a source taxonomy: set `source_mapping` on the datasets (see docs/seg.md).
dataset_type = 'BodyPart29Dataset'
data_root = 'data/bodypart29'
image_size = (1024, 768)  # (H, W)
# Left/right classes swapped by a horizontal flip (seg29.json flip_swap_label_pairs; a test checks they agree).
swap_seg_labels = [[5, 14], [6, 15], [7, 16], [8, 17], [9, 18], [10, 19], [11, 20], [12, 21]]

# The official train pipeline (order kept) with mmseg/mmcv ops where they exist. Insert
# dict(type='RandomBackground', bg_dir='data/BG-20k/train', prob=0.8) after LoadAnnotations to composite
# people onto random backgrounds.
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations'),
    dict(type='RandomResize', scale=(image_size[1], image_size[0]), ratio_range=(0.4, 2.0), keep_ratio=True),
    dict(type='RandomApply', prob=0.3, transforms=[dict(type='RandomCrop', crop_size=image_size, cat_max_ratio=0.75)]),
    dict(type='RandomGaussianBlur', prob=0.3, kernel_size=3, sigma_range=(0.1, 2.0)),
    dict(type='RandomGaussianNoise', prob=0.3, var_range=(5.0, 20.0)),
    dict(type='RandomRotate', prob=0.5, degree=60, pad_val=0, seg_pad_val=0),
    dict(type='RandomFlip', prob=0.5, direction='horizontal', swap_seg_labels=swap_seg_labels),
    dict(type='PhotoMetricDistortion'),
    dict(type='Resize', scale=(image_size[1], image_size[0]), keep_ratio=False),
    dict(type='PackSegInputs'),
]
# Validation resizes the image only; predictions are resized back and scored at the label's original size.
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(image_size[1], image_size[0]), keep_ratio=False),
    dict(type='LoadAnnotations'),
    dict(type='PackSegInputs'),
]
# Flip test-time augmentation (tools/test.py --tta): the image and its mirror at the test size; the mirror's
# left/right logits are swapped back before the softmaxes are averaged. Configs that change test_pipeline repeat this.
tta_flips = [dict(type='RandomFlip', prob=0.0, direction='horizontal'),
             dict(type='RandomFlip', prob=1.0, direction='horizontal')]
tta_pipeline = [test_pipeline[0], dict(type='TestTimeAug', transforms=[[test_pipeline[1]], tta_flips,
                                                                        [test_pipeline[2]], [test_pipeline[3]]])]
tta_model = dict(type='Sapiens2SegTTAModel', swap_seg_labels=swap_seg_labels)

train_dataloader = dict(
    batch_size=12,
    num_workers=8,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix=dict(img_path='images/train', seg_map_path='annotations/train'),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=4,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        data_prefix=dict(img_path='images/val', seg_map_path='annotations/val'),
        test_mode=True,
        pipeline=test_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(type='IoUMetric', iou_metrics=['mIoU'])  # reports aAcc, mIoU, mAcc
test_evaluator = val_evaluator
