# Sapiens2-0.8B albedo at 1024x768: 20k iterations, layer decay 0.85, clip 4.0, validation every 10k, 12 per GPU x 8.
_base_ = ['./_base_/albedo_1024x768.py', 'sapiens2::_base_/models/sapiens2_0.8b.py',
          'sapiens2::_base_/schedules/linear_20k.py']

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=1280))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.85), clip_grad=dict(max_norm=4.0))
train_cfg = dict(val_interval=10000)
train_dataloader = dict(batch_size=12)
