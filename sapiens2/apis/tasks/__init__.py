"""Registered inference tasks (``sapiens2.registry.INFERENCE_TASKS``); projects add their own. :func:`build_task`
finds and builds a config's task."""
from .base import BaseInferenceTask, compile_backbone
from .dense import DenseInferenceTask, DenseMapInferenceTask, map_panel
from .lookup import build_task, task_class
from .pose import PoseInferenceTask
from .seg import SegInferenceTask

__all__ = ['BaseInferenceTask', 'DenseInferenceTask', 'DenseMapInferenceTask', 'PoseInferenceTask', 'SegInferenceTask',
           'build_task', 'compile_backbone', 'map_panel', 'task_class']
