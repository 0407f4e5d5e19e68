"""Inference: ``Sapiens2Inferencer`` (any task, images / folders / videos), model building, pose top-down.

The names load on first use (PEP 562), so ``sapiens2-infer --help`` imports none of them.
"""
from sapiens2.utils.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    'init_model': '.builder', 'Sapiens2Inferencer': '.inferencer', 'build_task': '.tasks',
    'InferenceInterrupted': '.inferencer', 'ForegroundPersonFinder': '.person_finder',
    'inference_pipeline': '.pipeline', 'check_bboxes': '.pose_video.topdown',
    'inference_pose_topdown': '.pose_video.topdown', 'init_person_detector': '.pose_video.topdown',
    'SavePredictionsHook': '.save_predictions_hook',
    'BaseInferenceTask': '.tasks', 'DenseInferenceTask': '.tasks', 'DenseMapInferenceTask': '.tasks',
    'PoseInferenceTask': '.tasks', 'SegInferenceTask': '.tasks', 'map_panel': '.tasks'
})

__all__ = [
    'BaseInferenceTask', 'DenseInferenceTask', 'DenseMapInferenceTask', 'ForegroundPersonFinder',
    'InferenceInterrupted', 'PoseInferenceTask', 'SavePredictionsHook', 'SegInferenceTask', 'Sapiens2Inferencer',
    'build_task', 'check_bboxes', 'inference_pipeline', 'inference_pose_topdown', 'init_model', 'init_person_detector',
    'map_panel'
]
