# Tiny pointmap on SynthHumans for tests and demos on a CPU: the nano backbone from scratch with 8x8 patches (a 16x12
# token grid, so the three stride-2 scale convs leave 2x2 cells), a narrow two-block trunk (x4:
# 64x48 maps, bilinearly upsampled to the 128x96 targets by the loss), flip-only
# augmentation, a few hundred iterations.
_base_ = ['./_base_/pointmap_1024x768.py', 'sapiens2::_base_/models/sapiens2_nano.py',
          'sapiens2::_base_/schedules/linear_20k.py', 'sapiens2::_base_/synthhumans_nano.py']

data_root = 'data/synthhumans'
image_size = (128, 96)  # (H, W)
# The official 768 px canonical focal goes with 768 px wide inputs; scaled to this input width (96.0) it keeps
# canonical depths and the scale target O(1), as at full size.
canonical_focal = float(image_size[1])
max_iters = 500

model = dict(
    use_checkpoint=False,
    backbone=_base_.backbone,
    decode_head=dict(
        in_channels=64, img_size=image_size, patch_size=8, upsample_channels=(32, 16), conv_out_channels=(16, ),
        conv_kernel_sizes=(3, ), scale_conv_out_channels=(32, 32, 16), scale_hidden_channels=(32, 16),
        # The official losses, except that the normals-from-points term (weight 2) is down-weighted: on a
        # from-scratch model it dominates the first few hundred iterations and holds depth at the mean plane.
        loss_decode=[dict(loss, loss_weight=0.2) if loss['type'] == 'PointmapNormalLoss' else loss
                     for loss in _base_.model.decode_head.loss_decode]))

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadPointmapAnnotations'),
    dict(type='DenseRandomFlip', prob=0.5),
    dict(type='Letterbox', size=image_size, map_interpolations=_base_.dense_maps),
    dict(type='PointmapGenerateTarget', canonical_focal=canonical_focal, min_depth=0.04),
    _base_.filter_samples,
    dict(type='PackDenseInputs', target_key='gt_pointmap', extra_keys=_base_.pack_extra_keys),
]
# The base's validation at this size and focal.
val_pipeline = [dict(step, size=image_size) if step['type'] == 'Letterbox' else
                dict(step, canonical_focal=canonical_focal) if step['type'] == 'PointmapGenerateTarget' else step
                for step in _base_.val_pipeline]
train_dataloader = dict(batch_size=8, **_base_.nano_train_loader,
                        dataset=dict(data_root=f'{data_root}/train', pipeline=train_pipeline))
val_dataloader = dict(batch_size=8, **_base_.nano_val_loader,
                      dataset=dict(data_root=f'{data_root}/val', pipeline=val_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(_delete_=True, **_base_.nano_optimiser)
param_scheduler = [dict(_base_.param_scheduler[0], end=20), dict(_base_.param_scheduler[1], begin=20, end=max_iters)]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(checkpoint=dict(interval=max_iters), logger=dict(interval=20), visualization=dict(interval=4))
