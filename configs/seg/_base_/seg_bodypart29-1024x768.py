# Body-part segmentation (29 classes) at 1024x768, the official recipe at 0.4b without the backbone and the schedule:
# each size config takes them from ../../_base_/models/ and ../../_base_/schedules/.
_base_ = ['../../_base_/default_runtime.py', '../../_base_/optimizers/adamw_layer_decay.py',
          '../../_base_/datasets/bodypart29.py']

default_scope = 'mmseg'
num_classes = 29
embed_dims = 1024

model = dict(
    type='EncoderDecoder',
    data_preprocessor=dict(
        type='SegDataPreProcessor',
        mean=[123.675, 116.28, 103.53],
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        size=(1024, 768),  # training batches are already this size; mmseg needs it to stack them
        pad_val=0,
        seg_pad_val=255),
    backbone=dict(use_tokenizer=False, with_cls_token=True, with_cp=True),
    decode_head=dict(
        type='Sapiens2SegHead',
        in_channels=embed_dims,
        deconv_out_channels=(512, 256, 128, 64),
        conv_out_channels=(64, 64),
        channels=64,
        num_classes=num_classes,
        ignore_index=255,
        align_corners=False,
        loss_decode=[
            dict(
                type='Sapiens2SegCrossEntropyLoss',
                # seg29.json class_weight_ce (a test checks they agree); background 0.1.
                class_weight=[
                    0.1, 10, 10, 3, 2, 4, 4, 2, 2, 6, 10, 3, 3, 1, 4, 4, 2, 2, 6, 10, 3, 3, 1, 1, 10, 10, 10, 10, 10
                ],
                average='weighted',
                loss_weight=1.0),
            dict(type='Sapiens2DiceLoss', loss_weight=1.0),
        ]),
    train_cfg=dict(),
    test_cfg=dict(mode='whole'))

optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')

val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=1000, save_best='mIoU', rule='greater'),
    visualization=dict(type='SegVisualizationHook'),
    supervised_pixels=dict(type='SupervisedPixelsHook', ignore_index=255))  # an epoch of all-255 labels: an error
visualizer = dict(type='SegLocalVisualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
