# Sapiens2-1B albedo at 1024x768: 40k iterations, layer decay 0.9, clip 4.0, 7 per GPU x 8.
_base_ = ['./_base_/albedo_1024x768.py', 'sapiens2::_base_/models/sapiens2_1b.py',
          'sapiens2::_base_/schedules/linear_40k.py']

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=1536))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.9), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=7)
