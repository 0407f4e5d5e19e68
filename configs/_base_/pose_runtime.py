# Runtime for top-down pose configs: mmpose scope and mmpose's pose visualiser on top of the project runtime.
_base_ = ['./default_runtime.py']

default_scope = 'mmpose'
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='PoseLocalVisualizer', vis_backends=vis_backends, name='visualizer')
default_hooks = dict(visualization=dict(type='PoseVisualizationHook', enable=False))
