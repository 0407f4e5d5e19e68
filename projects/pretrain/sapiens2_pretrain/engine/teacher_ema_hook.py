"""Updates the pretraining teacher as an EMA of the student after every optimizer step."""
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from sapiens2.registry import HOOKS


@HOOKS.register_module()
class TeacherEMAHook(Hook):
    """Calls ``model.update_teacher(momentum)`` after each training iteration whose optimizer step happened:
    ``teacher <- momentum * teacher + (1 - momentum) * student`` (paper: momentum 0.992).

    Unlike MMEngine's ``EMAHook`` (whose ``momentum`` is the weight of the *new* value and which swaps weights for
    validation), ``momentum`` here is the weight kept by the teacher and no weights are ever swapped.
    """

    priority = 'ABOVE_NORMAL'

    def __init__(self, momentum: float = 0.992) -> None:
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f'TeacherEMAHook momentum must be in [0, 1], got {momentum}')
        self.momentum = momentum

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
        self._model(runner).update_teacher(self.momentum)
