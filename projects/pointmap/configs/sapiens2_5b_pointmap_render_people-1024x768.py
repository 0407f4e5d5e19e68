# Sapiens2-5B pointmap at 1024x768: wider head, lr 1e-4, 40k iterations, layer decay 0.94, clip 4.0,
# 1 per GPU x 8, validation batch 1.
_base_ = ['./_base_/pointmap_1024x768.py', 'sapiens2::_base_/models/sapiens2_5b.py',
          'sapiens2::_base_/schedules/linear_40k.py']

model = dict(
    backbone=_base_.backbone,
    decode_head=dict(in_channels=2432, upsample_channels=(1536, 768, 768, 768), conv_out_channels=(128, 64, 32)))
optim_wrapper = dict(optimizer=dict(lr=1e-4), paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=1)
val_dataloader = dict(batch_size=1)
test_dataloader = dict(batch_size=1)
