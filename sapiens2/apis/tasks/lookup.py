"""A config's inference task: which registered task class runs it, and building it."""
from typing import Dict, Optional

from torch import nn

from sapiens2.registry import INFERENCE_TASKS

from .base import BaseInferenceTask


def build_task(model: nn.Module, cfg, dtype: str = 'fp32',
               task_options: Optional[Dict[str, dict]] = None) -> BaseInferenceTask:
    """The config's inference task: ``cfg.infer_task`` (``type`` + arguments), else the registered task whose
    ``head_types`` contains the config's head type. ``task_options[task name]`` overrides the arguments."""
    task_cls = task_class(cfg)
    spec = dict(cfg.get('infer_task') or {})
    spec.update((task_options or {}).get(task_cls.name, {}))
    spec.pop('type', None)
    return task_cls(model=model, cfg=cfg, dtype=dtype, **spec)


def task_class(cfg) -> type:
    """The inference task class of a config (see :func:`build_task`)."""
    task_type = (cfg.get('infer_task') or {}).get('type') or _task_type_for_head(cfg)
    task_cls = INFERENCE_TASKS.get(task_type)
    if task_cls is None:
        raise KeyError(f'inference task {task_type!r} is not registered (registered: '
                       f'{sorted(INFERENCE_TASKS.module_dict)}); check the config\'s custom_imports')
    return task_cls


def _task_type_for_head(cfg) -> str:
    head = cfg.model.get('head') or cfg.model.get('decode_head') or {}
    head_type = str(head.get('type', '')).split('.')[-1]
    INFERENCE_TASKS.import_from_location()  # the tasks register when first looked up
    for name, task_cls in INFERENCE_TASKS.module_dict.items():
        if head_type in getattr(task_cls, 'head_types', ()):
            return name
    if str(cfg.model.get('type', '')).split('.')[-1] == 'BottomupPoseEstimator':
        raise ValueError(f'{cfg.filename or "the config"} is a bottom-up mmpose config (BottomupPoseEstimator, head '
                         f'{head_type}): sapiens2 runs top-down pose models (TopdownPoseEstimator: one person box at '
                         "a time) and its dense tasks; run this config with mmpose's MMPoseInferencer, or give a "
                         'sapiens2 pose config as --model (`sapiens2 configs` lists them).')
    raise KeyError(f'no inference task handles head type {head_type!r}: add infer_task = dict(type=...) to the '
                   f'config (registered tasks: {sorted(INFERENCE_TASKS.module_dict)}), and make sure its '
                   'custom_imports load the project that registers the task')
