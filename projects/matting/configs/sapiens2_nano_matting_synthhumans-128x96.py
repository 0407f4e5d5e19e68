# Tiny human alpha matting on SynthHumans (sapiens2.datasets.synthhumans: soft alpha, pre-multiplied foreground and
# background per image) for tests and demos on a CPU: the nano backbone from scratch with 8x8 patches (a 16x12 token
# grid at 128x96), a narrow two-block trunk (x4: 64x48 maps, bilinearly upsampled to the 128x96 targets by the loss),
# flip-only augmentation, 500 iterations (segmenting the people takes longer from scratch than the 300 of the other
# nano configs). Metrics at the original 256x192 with a radius-2 trimap.
_base_ = ['./_base_/matting_1024x768.py', 'sapiens2::_base_/models/sapiens2_nano.py',
          'sapiens2::_base_/schedules/linear_20k.py', 'sapiens2::_base_/synthhumans_nano.py']

data_root = 'data/synthhumans'
image_size = (128, 96)  # (H, W)
max_iters = 500

model = dict(
    use_checkpoint=False,
    backbone=_base_.backbone,
    decode_head=dict(
        in_channels=64, upsample_channels=(32, 16), conv_out_channels=(16, ), conv_kernel_sizes=(3, ),
        # The Laplacian term at weight 1 (level weights up to 16) outweighs the others for a from-scratch model.
        loss_decode=[dict(loss, loss_weight=0.5) if loss['type'] == 'MattingLaplacianLoss' else loss
                     for loss in _base_.model.decode_head.loss_decode]))

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadMattingAnnotations'),
    dict(type='DenseRandomFlip', prob=0.5),
    dict(type='Letterbox', size=image_size, map_interpolations=_base_.dense_maps),
    dict(type='GenerateTrimap', radius=(1, 2), keep_existing=False),
    dict(type='FormatMattingTarget'),
    dict(type='PackDenseInputs', target_key='gt_matting'),
]
# The base's validation at this size, with a radius-2 trimap.
val_pipeline = [dict(step, size=image_size) if step['type'] == 'Letterbox' else
                dict(step, radius=2) if step['type'] == 'GenerateTrimap' else step for step in _base_.val_pipeline]
train_dataloader = dict(batch_size=8, **_base_.nano_train_loader,
                        dataset=dict(data_root=f'{data_root}/train', pipeline=train_pipeline,
                                     foreground_premultiplied=True))
val_dataloader = dict(batch_size=8, **_base_.nano_val_loader,
                      dataset=dict(data_root=f'{data_root}/val', pipeline=val_pipeline, foreground_premultiplied=True))
test_dataloader = val_dataloader

optim_wrapper = dict(_delete_=True, **_base_.nano_optimiser)
param_scheduler = [dict(_base_.param_scheduler[0], end=20), dict(_base_.param_scheduler[1], begin=20, end=max_iters)]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(checkpoint=dict(interval=max_iters), logger=dict(interval=20), visualization=dict(interval=4))
