# Sapiens2-5B human alpha matting at 1024x768: the 5b normal head widths and recipe (lr 1e-4, 40k iterations,
# layer decay 0.94, clip 4.0, 3 per GPU x 8).
_base_ = ['./_base_/matting_1024x768.py', 'sapiens2::_base_/models/sapiens2_5b.py',
          'sapiens2::_base_/schedules/linear_40k.py']

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=2432, **_base_.wide_trunk))
optim_wrapper = dict(optimizer=dict(lr=1e-4), paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
train_dataloader = dict(batch_size=3)
