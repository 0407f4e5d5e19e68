# Sapiens2-1B-4K body-part segmentation: the paper's highest-fidelity setting, which the official release does not ship
# as a task model. The 1B-4K backbone (4x4 window tokenizer, 4096x3072 input -> 64x48 token grid) under the seg head
# with a fifth x2 deconvolution, so logits come out at 2048x1536 (half the input in each axis).
#
# Head and memory choices:
# * The 1B seg head plus one deconvolution (64 channels): (512, 256, 128, 64, 64) -> x32. 29 logits at 2048x1536 are
#   91 M values per image, so the last stages stay at 64 channels.
# * Loss: mmseg resizes the 2048x1536 logits to the label size (bilinear), as for any head output.
# * bf16 autocast, activation checkpointing in the backbone, 1 image per GPU.
# * No official weights: the backbone starts from the 1B-4K pretrain, the head from scratch.
_base_ = ['./sapiens2_1b_seg_bodypart29-1024x768.py']

pretrained_checkpoint = 'pretrain-1b-4k'
image_size = (4096, 3072)  # (H, W)

model = dict(
    backbone=dict(img_size=image_size, use_tokenizer=True, init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(deconv_out_channels=(512, 256, 128, 64, 64)))

# The 1024x768 pipelines at this size.
scale = (image_size[1], image_size[0])  # (W, H)
train_pipeline = [
    dict(step, scale=scale) if step['type'] in ('RandomResize', 'Resize') else
    dict(step, transforms=[dict(step['transforms'][0], crop_size=image_size)]) if step['type'] == 'RandomApply' else
    step for step in _base_.train_pipeline
]
test_pipeline = [dict(step, scale=scale) if step['type'] == 'Resize' else step for step in _base_.test_pipeline]
tta_pipeline = [test_pipeline[0], dict(type='TestTimeAug', transforms=[[test_pipeline[1]], {{_base_.tta_flips}},
                                                                        [test_pipeline[2]], [test_pipeline[3]]])]
train_dataloader = dict(batch_size=1, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(batch_size=1, dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
