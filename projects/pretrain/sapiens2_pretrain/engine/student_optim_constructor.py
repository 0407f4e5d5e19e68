"""Optimizer constructor for pretraining: the default MMEngine rules, applied to the student only."""
from mmengine.optim import DefaultOptimWrapperConstructor
from torch import nn

from sapiens2.registry import OPTIM_WRAPPER_CONSTRUCTORS


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class StudentOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """``DefaultOptimWrapperConstructor`` (``paramwise_cfg`` with ``custom_keys``, ``norm/bias/flat_decay_mult``)
    that leaves the EMA teacher (the ``teacher`` sub-module, updated by ``TeacherEMAHook``) out of the optimizer
    instead of warning once per frozen teacher parameter."""

    def add_params(self, params: list, module: nn.Module, prefix: str = '', **kwargs) -> None:
        if prefix == 'teacher':
            return
        super().add_params(params, module, prefix, **kwargs)
