"""Detects NaN/Inf losses and gradients during training, and keeps them out of the weights and checkpoints."""
import math
from collections.abc import Mapping

import torch
from mmengine.dist import all_reduce
from mmengine.hooks import Hook
from mmengine.optim import OptimWrapperDict
from mmengine.registry import HOOKS

ACTIONS = ('stop', 'skip')


class NonFiniteTrainingError(FloatingPointError):
    """Training stopped on a non-finite loss or gradient (the message names the iteration, the terms and the fix)."""


@HOOKS.register_module()
class NonFiniteLossHook(Hook):
    """Stops the run, or skips the update, at the first iteration whose loss or gradients are NaN/Inf.

    A pre-step hook on every optimizer drops the update (all gradients set to None) whenever a gradient is not
    finite, so the weights never become NaN. After the iteration the hook reports the iteration and the loss names
    that are not finite, then raises :class:`NonFiniteTrainingError` (a ``FloatingPointError``; ``action='stop'``)
    or logs a warning and continues (``action='skip'``, raising after ``max_consecutive_skips`` skipped iterations
    in a row). A checkpoint whose weights are not finite is never written.

    Args:
        action: 'stop' or 'skip'.
        max_consecutive_skips: with 'skip', how many skipped iterations in a row are tolerated.
    """

    priority = 'ABOVE_NORMAL'  # before LoggerHook and CheckpointHook

    def __init__(self, action: str = 'stop', max_consecutive_skips: int = 10):
        if action not in ACTIONS:
            raise ValueError(f"NonFiniteLossHook: action must be one of {ACTIONS}, got '{action}'")
        self.action = action
        self.max_consecutive_skips = max_consecutive_skips
        self._update_dropped = False
        self._consecutive = 0

    def before_train(self, runner) -> None:
        wrappers = runner.optim_wrapper.values() if isinstance(runner.optim_wrapper, OptimWrapperDict) else [
            runner.optim_wrapper
        ]
        for wrapper in wrappers:
            wrapper.optimizer.register_step_pre_hook(self._drop_non_finite_update)

    def _drop_non_finite_update(self, optimizer: torch.optim.Optimizer, args, kwargs) -> None:
        params = [p for group in optimizer.param_groups for p in group['params'] if p.grad is not None]
        finite = torch.stack([torch.isfinite(p.grad).all() for p in params]).all().float() if params else \
            torch.ones(())
        all_reduce(finite, op='min')  # FSDP shards: every rank must agree
        if finite.item() < 1:
            for p in params:
                p.grad = None
            self._update_dropped = True

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs: Mapping | None = None) -> None:
        bad = [name for name, value in (outputs or {}).items() if 'loss' in name and not _finite(value)]
        bad = [name for name in bad if name != 'loss'] or bad  # name the terms rather than their sum
        dropped, self._update_dropped = self._update_dropped, False
        if not bad and not dropped:
            self._consecutive = 0
            return
        what = f'non-finite loss ({", ".join(bad)})' if bad else 'non-finite gradients (losses finite)'
        message = f'Iteration {runner.iter + 1}: {what}; the weight update of this iteration was not applied.'
        hint = 'Lower the learning rate, enable clip_grad in optim_wrapper, or check the input data of this iteration'
        self._consecutive += 1
        if self.action == 'stop':
            raise NonFiniteTrainingError(f"{message} Training stopped. {hint}, or use "
                                         "NonFiniteLossHook(action='skip') to skip such iterations.")
        if self._consecutive > self.max_consecutive_skips:
            raise NonFiniteTrainingError(
                f'{message} Training stopped: {self._consecutive} iterations in a row were skipped '
                f'(max_consecutive_skips={self.max_consecutive_skips}), so the run is diverging rather than meeting '
                f'a few bad batches. {hint}; resume from the last checkpoint once fixed.')
        runner.logger.warning(f'{message} Skipped ({self._consecutive} in a row).')

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        bad = [k for k, v in checkpoint.get('state_dict', {}).items()
               if torch.is_tensor(v) and v.is_floating_point() and not bool(torch.isfinite(v).all())]
        if bad:
            raise NonFiniteTrainingError(
                f'Refusing to save a checkpoint at iteration {runner.iter}: non-finite weights in {bad[:5]}'
                f'{" ..." if len(bad) > 5 else ""}. Resume from the last checkpoint with a lower learning rate or '
                'clip_grad in optim_wrapper.')


def _finite(value) -> bool:
    if torch.is_tensor(value):
        return bool(torch.isfinite(value).all())
    return not isinstance(value, float) or math.isfinite(value)
