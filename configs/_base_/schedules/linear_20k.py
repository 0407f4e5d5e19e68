# The official schedule: 20k iterations, the lr warmed up linearly from 1e-3 of its value over 500 iterations, then
# decayed linearly to 0; validation every 1000. Other lengths inherit this file and set max_iters (linear_<n>k.py).
max_iters = 20000
warmup_iters = 500
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup_iters),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup_iters, end=max_iters),
]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=max_iters, val_interval=1000)
