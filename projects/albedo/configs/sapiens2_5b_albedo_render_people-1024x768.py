# Sapiens2-5B albedo at 1024x768: wider upsampling, lr 5e-4 (unlike 5b normal/pointmap), 40k iterations,
# layer decay 0.94, clip 4.0, validation only at the end, 3 per GPU x 8.
_base_ = ['./_base_/albedo_1024x768.py', 'sapiens2::_base_/models/sapiens2_5b.py',
          'sapiens2::_base_/schedules/linear_40k.py']

model = dict(backbone=_base_.backbone, decode_head=dict(in_channels=2432, upsample_channels=(1536, 768, 512, 256)))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.94), clip_grad=dict(max_norm=4.0))
train_cfg = dict(val_interval=40000)
train_dataloader = dict(batch_size=3)
