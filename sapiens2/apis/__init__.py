"""Inference: ``Sapiens2Inferencer`` (any task, images / folders / videos), model building, pose top-down."""
from .builder import init_model
from .inferencer import Sapiens2Inferencer, build_task
from .pose_topdown import inference_pose_topdown, init_pose_model, init_person_detector
from .tasks import BaseInferenceTask, DenseInferenceTask, PoseInferenceTask, SegInferenceTask

__all__ = [
    'BaseInferenceTask', 'DenseInferenceTask', 'PoseInferenceTask', 'SegInferenceTask',
    'Sapiens2Inferencer', 'build_task', 'inference_pose_topdown', 'init_model', 'init_person_detector',
    'init_pose_model'
]
