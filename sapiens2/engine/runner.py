"""``Sapiens2Runner``: MMEngine's Runner with strict, format-agnostic checkpoint loading."""
import itertools
import re
from collections import OrderedDict
from typing import Callable, Optional, Union

from mmengine.config import Config
from mmengine.model import BaseTTAModel, is_model_wrapper
from mmengine.registry import RUNNERS
from mmengine.runner import Runner
from mmengine.runner.checkpoint import _load_checkpoint
from torch import nn

from .checkpoint import check_checkpoint_fit, extract_state_dict, load_model_weights, resolve_checkpoint_path
from .checkpoint.integrity import incomplete_reason, newest_complete_checkpoint
from .checkpoint.resume import check_schedule_left, optimizer_mismatch_message, param_groups


@RUNNERS.register_module()
class Sapiens2Runner(Runner):
    """Runner whose ``load_from`` and ``--resume`` loads are strict unless the config sets ``load_strict = False``.

    MMEngine hard-codes ``strict=False`` there, which silently leaves random weights when key names differ.
    Checkpoint keys are adapted as in :func:`sapiens2.engine.checkpoint.load_model_weights` (``module.`` stripped,
    ``decode_head.`` -> ``head.`` for mmpose estimators). The config's ``trust_checkpoint`` and
    ``allow_non_finite_weights`` keys apply to the process when :func:`~sapiens2.engine.launch.build_runner` builds it
    (:func:`~sapiens2.engine.checkpoint.apply_config_checkpoint_policy`).
    ``load_from`` may be a Hub reference or a model alias (checked against the repository's ``config.json`` when it
    has one).

    ``--resume`` without a path continues from the checkpoint :func:`~sapiens2.engine.checkpoint.
    find_resume_checkpoint` chooses (the newest complete one when the recorded one is truncated); a truncated
    checkpoint given with ``--resume PATH`` raises an error naming it and the newest complete one. Resuming from a
    checkpoint already past the schedule's end (``max_iters``/``max_epochs``) or saved with another optimizer config
    (other parameter groups) raises a ``ValueError`` naming the checkpoint and the fix.

    Fine-tuning (``train()`` with ``load_from``, not resuming) from a checkpoint whose head has another layout (308
    keypoints into a 17-keypoint model, 29 classes into 3) loads every other weight and says so in one line; any
    other difference stays an error.
    """

    load_strict: bool = True
    _training: bool = False
    _loaded_param_groups: Optional[list] = None  # of the checkpoint being resumed, to name an optimizer mismatch

    def train(self) -> nn.Module:
        """MMEngine's ``train``, in which ``load_from`` may hold a head of another layout (fine-tuning to another
        keypoint set or other classes): the rest is loaded and the head's output layer keeps its initialisation,
        with one line saying so (:func:`~sapiens2.engine.checkpoint.prepare_state_dict`)."""
        self._training = True
        try:
            return super().train()
        finally:
            self._training = False

    @classmethod
    def from_cfg(cls, cfg: Config) -> 'Sapiens2Runner':
        runner = super().from_cfg(cfg)
        runner.load_strict = bool(cfg.get('load_strict', True))
        return runner

    def load_checkpoint(self,
                        filename: str,
                        map_location: Union[str, Callable] = 'cpu',
                        strict: Union[bool, None] = None,
                        revise_keys: list = [(r'^module.', '')]) -> dict:
        path = resolve_checkpoint_path(filename)
        model = self.model.module if is_model_wrapper(self.model) else self.model
        if isinstance(model, BaseTTAModel):  # tools/test.py --tta: the checkpoint holds the wrapped model's weights
            model = model.module
        fine_tuning = self._training and not self._resume
        check_checkpoint_fit(model, path, compare_labels=not fine_tuning)
        checkpoint = _load_checkpoint(path, map_location=map_location)
        self._loaded_param_groups = param_groups(checkpoint.get('optimizer') if isinstance(checkpoint, dict) else None)
        self.call_hook('after_load_checkpoint', checkpoint=checkpoint)
        state_dict = extract_state_dict(checkpoint, str(filename))
        for pattern, replacement in revise_keys:
            state_dict = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state_dict.items())
        load_model_weights(model, state_dict, strict=self.load_strict if strict is None else strict,
                           source=str(filename), head_layout_may_differ=fine_tuning)
        self._has_loaded = True
        self.logger.info(f'Load checkpoint from {filename}' + (f' ({path})' if path != filename else ''))
        return checkpoint

    def resume(self, filename: str, resume_optimizer: bool = True, resume_param_scheduler: bool = True,
               map_location: Union[str, Callable] = 'default') -> None:
        reason = incomplete_reason(str(filename))
        if reason is not None:  # only --resume PATH: the automatic choice is complete (find_resume_checkpoint)
            fallback, _ = newest_complete_checkpoint(self.work_dir, exclude=str(filename))
            hint = f'; the newest complete checkpoint of the work dir is {fallback}' if fallback else ''
            raise ValueError(f'Cannot resume from {filename}: the file is truncated or damaged ({reason}){hint}.')
        try:
            super().resume(filename, resume_optimizer, resume_param_scheduler, map_location)
        except ValueError as err:  # torch: 'loaded state dict has a different number of parameter groups'...
            if 'parameter group' not in str(err):
                raise
            raise ValueError(optimizer_mismatch_message(str(filename), self._loaded_param_groups,
                                                        param_groups(self.optim_wrapper.state_dict()))) from err
        finally:
            self._loaded_param_groups = None
        if check_schedule_left(self, str(filename)) == 0 and hasattr(self.train_loop, 'dataloader_iterator'):
            # Nothing left to train: MMEngine's iteration loop would still load every batch it skips (minutes).
            self.train_loop.dataloader_iterator = itertools.repeat(None)
