# Runtime of the dense projects (normal, pointmap, albedo, matting): the sapiens2 scope and the official optimiser
# (./optimizers/). The schedule is a config's own choice from ./schedules/.
_base_ = ['./default_runtime.py', './optimizers/adamw_layer_decay.py']

default_scope = 'sapiens2'
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')], name='visualizer')
