# What the dense projects (normal, pointmap, albedo, matting) share at 1024x768, on top of their runtime: the estimator
# with the 0.4b head trunk (a size config takes its backbone from ./models/ and sets the head's in_channels), the
# official geometric augmentation and sample filter as pipeline steps, the data loaders (20 images per GPU), and the
# best checkpoint by a lower-is-better metric. A project's base adds its head, maps, pipelines, dataset and metric.
_base_ = ['./dense_runtime.py']

image_size = (1024, 768)  # (H, W)
model = dict(
    type='DenseEstimator',
    use_checkpoint=True,
    backbone=dict(use_tokenizer=False, with_cls_token=True),
    decode_head=dict(in_channels=1024, upsample_channels=(768, 512, 256, 128), conv_out_channels=(64, 32, 16),
                     conv_kernel_sizes=(3, 3, 3)))
# The wider trunk of the 5b heads: model = dict(decode_head=dict(in_channels=2432, **_base_.wide_trunk)).
wide_trunk = dict(upsample_channels=(1536, 768, 512, 256), conv_out_channels=(128, 64, 32))

# Steps for the train pipelines: random rescale (give it the maps' interpolations) and crop before the letterbox, and
# skipping samples with almost no labelled pixels or a person filling the frame.
random_scale = dict(type='DenseRandomScale', prob=0.3, scale_range=(0.5, 2.0))
random_crop = dict(type='DenseRandomCropContinuous', prob=0.3, aspect_range=(0.5, 2.0), area_range=(0.4, 1.0))
filter_samples = dict(type='FilterDenseSample', min_valid_pixels=16, max_coverage=0.96)

train_dataloader = dict(batch_size=20, num_workers=4, persistent_workers=True, pin_memory=True,
                        sampler=dict(type='InfiniteSampler', shuffle=True))
val_dataloader = dict(batch_size=4, num_workers=4, persistent_workers=True,
                      sampler=dict(type='DefaultSampler', shuffle=False), dataset=dict(test_mode=True))
test_dataloader = val_dataloader

default_hooks = dict(checkpoint=dict(rule='less'))
