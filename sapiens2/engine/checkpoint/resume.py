"""``--resume``: which checkpoint it continues from when none is given (the newest complete one when the recorded
one is truncated), and what it checks beyond MMEngine: that the checkpoint leaves something to train, and, when its
optimizer state does not fit, what differs (torch names neither the file nor the groups)."""
import logging
import os.path as osp
from typing import List, Mapping, Optional

from mmengine.logging import print_log
from mmengine.runner import EpochBasedTrainLoop

from .integrity import incomplete_reason, newest_complete_checkpoint

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


def check_schedule_left(runner, checkpoint: str) -> int:
    """After ``runner`` resumed from ``checkpoint``: a ``ValueError`` when the checkpoint is past the end of the
    config's schedule (nothing would be trained, silently), a warning when it is exactly at the end. Returns the
    iterations (or epochs) left."""
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
    return end - done


def find_resume_checkpoint(work_dir: str) -> Optional[str]:
    """The checkpoint ``--resume`` (without a path) continues from: the one the work dir's ``last_checkpoint``
    record names, when it is complete.

    No record: None (training starts from scratch, as in MMEngine). An empty record, one naming a file that does not
    exist, or one naming a truncated or damaged checkpoint (:func:`~sapiens2.engine.checkpoint.integrity.
    incomplete_reason`): the newest complete ``iter_*.pth``/``epoch_*.pth`` in the work dir, with a warning saying
    so; if there is none, ``FileNotFoundError`` naming the record.
    """
    record = osp.join(work_dir, 'last_checkpoint')
    if not osp.exists(record):
        print_log('Did not find last_checkpoint to be resumed.', logger='current')
        return None
    with open(record) as f:
        recorded = f.read().strip()
    latest = next((c for c in (recorded, osp.join(work_dir, recorded)) if recorded and osp.isfile(c)), None)
    if latest is None:
        problem = f'{record} is empty' if not recorded else f'{record} names {recorded}, which does not exist'
    else:
        reason = incomplete_reason(latest)
        if reason is None:
            return latest
        problem = f'the latest checkpoint {latest} is truncated or damaged ({reason})'
    newest, skipped = newest_complete_checkpoint(work_dir, exclude=latest or '')
    problem += ''.join(f', {path} too ({why})' for path, why in skipped)
    if newest is None:
        qualifier = 'other complete ' if latest else 'complete ' if skipped else ''
        raise FileNotFoundError(
            f'Cannot resume: {problem}, and {work_dir} holds no {qualifier}iter_*.pth or epoch_*.pth checkpoint. '
            f'Give the checkpoint with --resume PATH, or train from scratch without --resume (remove {record}).')
    again = ' (the iterations after it are trained again)' if latest else ''
    print_log(f'{problem[:1].upper()}{problem[1:]}; resuming from the newest complete checkpoint in the work dir '
              f'instead: {newest}{again}', logger='current', level=logging.WARNING)
    return newest
