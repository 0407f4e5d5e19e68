"""Inference: ``Sapiens2Inferencer`` (any task, images / folders / videos), model building, pose top-down."""
from .builder import init_model
from .inferencer import InferenceInterrupted, Sapiens2Inferencer, build_task
from .pipeline import inference_pipeline
from .pose_topdown import check_bboxes, inference_pose_topdown, init_person_detector
from .save_predictions_hook import SavePredictionsHook
from .tasks import BaseInferenceTask, DenseInferenceTask, PoseInferenceTask, SegInferenceTask

__all__ = [
    'BaseInferenceTask', 'DenseInferenceTask', 'InferenceInterrupted', 'PoseInferenceTask', 'SavePredictionsHook',
    'SegInferenceTask', 'Sapiens2Inferencer', 'build_task', 'check_bboxes', 'inference_pipeline',
    'inference_pose_topdown', 'init_model', 'init_person_detector'
]
