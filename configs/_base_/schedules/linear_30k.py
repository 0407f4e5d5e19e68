# The official schedule (./linear_20k.py) over 30k iterations.
_base_ = ['./linear_20k.py']

max_iters = 30000
param_scheduler = [_base_.param_scheduler[0], dict(_base_.param_scheduler[1], end=max_iters)]
train_cfg = dict(max_iters=max_iters)
