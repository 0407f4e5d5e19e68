"""Updates the pretraining teacher as an EMA of the student after every optimizer step."""
import math

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from sapiens2.registry import HOOKS


@HOOKS.register_module()
class TeacherEMAHook(Hook):
    """Calls ``model.update_teacher(momentum)`` after each training iteration whose optimizer step happened:
    ``teacher <- momentum * teacher + (1 - momentum) * student`` (paper: momentum 0.992).

    Unlike MMEngine's ``EMAHook`` (whose ``momentum`` is the weight of the *new* value and which swaps weights for
    validation), ``momentum`` here is the weight kept by the teacher and no weights are ever swapped.
    ``final_momentum`` (DINO's schedule; None: constant): the momentum rises from ``momentum`` to it along a
    half cosine over the training's ``max_iters``.
    """

    priority = 'ABOVE_NORMAL'

    def __init__(self, momentum: float = 0.992, final_momentum: float | None = None) -> None:
        for name, value in (('momentum', momentum), ('final_momentum', final_momentum)):
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f'TeacherEMAHook {name} must be in [0, 1], got {value}')
        self.momentum = momentum
        self.final_momentum = final_momentum

    def momentum_at(self, iteration: int, max_iters: int) -> float:
        """The momentum used after the (0-based) ``iteration`` of a training of ``max_iters`` iterations."""
        if self.final_momentum is None:
            return self.momentum
        progress = min(iteration / max(max_iters - 1, 1), 1.0)
        return self.final_momentum - (self.final_momentum - self.momentum) * (1 + math.cos(math.pi * progress)) / 2

    @staticmethod
    def _model(runner):
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        if not callable(getattr(model, 'update_teacher', None)):
            raise TypeError(f'TeacherEMAHook needs a model with update_teacher(momentum), got {type(model).__name__}')
        return model

    def before_train(self, runner) -> None:
        self._model(runner)

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        optim_wrapper = runner.optim_wrapper
        if hasattr(optim_wrapper, 'should_update') and not optim_wrapper.should_update():
            return
        momentum = self.momentum if self.final_momentum is None else self.momentum_at(runner.iter, runner.max_iters)
        self._model(runner).update_teacher(momentum)
