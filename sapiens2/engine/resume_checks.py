"""What ``--resume`` checks beyond MMEngine: that the checkpoint leaves something to train, and, when its optimizer
state does not fit, what differs (torch names neither the file nor the groups)."""
import logging
from typing import List, Mapping, Optional

from mmengine.logging import print_log
from mmengine.runner import EpochBasedTrainLoop

NEW_SCHEDULE_HINT = 'to start a new schedule from its weights, set load_from={} and train without --resume'


def param_groups(optimizer_state: Optional[Mapping]) -> Optional[List[dict]]:
    """The ``param_groups`` of an optimizer state dict (None for anything else, e.g. the states of several
    optimizers)."""
    groups = optimizer_state.get('param_groups') if isinstance(optimizer_state, Mapping) else None
    return groups if isinstance(groups, list) else None


def optimizer_mismatch_message(checkpoint: str, saved: Optional[List[dict]], current: Optional[List[dict]]) -> str:
    """One line: ``checkpoint``'s optimizer state (``saved`` groups) does not fit this config's optimizer, what
    differs, and the fix."""
    if saved is None or current is None:
        what = 'its parameter groups differ'
    elif len(saved) != len(current):
        what = f'it has {len(saved)} parameter groups, this config\'s optimizer {len(current)}'
    else:
        index, old, new = next(((i, len(a['params']), len(b['params'])) for i, (a, b) in enumerate(zip(saved, current))
                                if len(a['params']) != len(b['params'])), (None, None, None))
        what = (f'parameter group {index} holds {old} parameters there and {new} here' if index is not None else
                'its parameter groups differ')
    return (f'Cannot resume from {checkpoint}: its optimizer state was saved with another optimizer config ({what}). '
            '--resume continues a run with the same optim_wrapper (optimizer, constructor, paramwise_cfg, model); '
            f'{NEW_SCHEDULE_HINT.format(checkpoint)}.')


def check_schedule_left(runner, checkpoint: str) -> None:
    """After ``runner`` resumed from ``checkpoint``: a ``ValueError`` when the checkpoint is past the end of the
    config's schedule (nothing would be trained, silently), a warning when it is exactly at the end."""
    loop = runner.train_loop
    by_epoch = isinstance(loop, EpochBasedTrainLoop)
    unit, done, end = ('epoch', runner.epoch, loop.max_epochs) if by_epoch else ('iteration', runner.iter,
                                                                                 loop.max_iters)
    key = f'train_cfg.max_{unit.replace("iteration", "iter")}s'
    if done > end:
        raise ValueError(f'Cannot resume from {checkpoint}: it was saved at {unit} {done}, already past {key} = {end} '
                         f'of this config, so nothing would be trained. To train longer, raise {key} above {done} '
                         f'(--cfg-options {key}=N); {NEW_SCHEDULE_HINT.format(checkpoint)}.')
    if done == end:
        print_log(f'{checkpoint} was saved at the end of the schedule ({key} = {end}): nothing is left to train. '
                  f'Raise {key} to train longer.', logger='current', level=logging.WARNING)
