"""Registered inference tasks (``sapiens2.registry.INFERENCE_TASKS``); projects add their own."""
from .base import BaseInferenceTask
from .dense import DenseInferenceTask
from .pose import PoseInferenceTask
from .seg import SegInferenceTask

__all__ = ['BaseInferenceTask', 'DenseInferenceTask', 'PoseInferenceTask', 'SegInferenceTask']
