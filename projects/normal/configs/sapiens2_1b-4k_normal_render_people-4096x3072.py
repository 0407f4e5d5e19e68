# Sapiens2-1B-4K surface normals: the paper's highest-fidelity setting, which the official release does not ship as a
# task model. The 1B-4K backbone (4x4 window tokenizer, 4096x3072 input -> 64x48 token grid) under the normal head
# with a fifth x2 upsample block, so normals come out at 2048x1536 (half the input in each axis).
#
# Head and memory choices:
# * Same trunk as the 1B normal head plus one block (64 channels): (768, 512, 256, 128, 64) -> x32. The extra block and
#   the conv layers at 2048x1536 keep the channel counts small because every head activation there is 3.1 M pixels.
# * Loss: the 2048x1536 prediction is bilinearly resized to the 4096x3072 letterboxed ground truth (DenseTrunkHead).
# * bf16 autocast, whole-backbone activation checkpointing, 1 image per GPU (the head activations dominate memory).
# * No official weights: the backbone starts from the 1B-4K pretrain, the head from scratch.
_base_ = ['./sapiens2_1b_normal_render_people-1024x768.py']

pretrained_checkpoint = 'pretrain-1b-4k'
image_size = (4096, 3072)  # (H, W)

model = dict(
    backbone=dict(img_size=image_size, use_tokenizer=True, init_cfg=dict(checkpoint=pretrained_checkpoint)),
    decode_head=dict(upsample_channels=(768, 512, 256, 128, 64), conv_out_channels=(32, 16),
                     conv_kernel_sizes=(3, 3)))

# The 1024x768 pipelines, letterboxed to this size.
train_pipeline = [dict(step, size=image_size) if step['type'] == 'Letterbox' else step
                  for step in _base_.train_pipeline]
val_pipeline = [dict(step, size=image_size) if step['type'] == 'Letterbox' else step for step in _base_.val_pipeline]
train_dataloader = dict(batch_size=1, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(batch_size=1, dataset=dict(pipeline=val_pipeline))
test_dataloader = val_dataloader
