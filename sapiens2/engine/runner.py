"""``Sapiens2Runner``: MMEngine's Runner with strict, format-agnostic checkpoint loading."""
import re
from collections import OrderedDict
from typing import Callable, Union

from mmengine.config import Config
from mmengine.model import BaseTTAModel, is_model_wrapper
from mmengine.registry import RUNNERS
from mmengine.runner import Runner
from mmengine.runner.checkpoint import _load_checkpoint

from .checkpoint import (
    apply_config_checkpoint_policy,
    check_checkpoint_fit,
    extract_state_dict,
    load_model_weights,
    resolve_checkpoint_path,
)
from .checkpoint_integrity import incomplete_reason, newest_complete_checkpoint


@RUNNERS.register_module()
class Sapiens2Runner(Runner):
    """Runner whose ``load_from`` and ``--resume`` loads are strict unless the config sets ``load_strict = False``.

    MMEngine hard-codes ``strict=False`` there, which silently leaves random weights when key names differ.
    Checkpoint keys are adapted as in :func:`sapiens2.engine.checkpoint.load_model_weights` (``module.`` stripped,
    ``decode_head.`` -> ``head.`` for mmpose estimators). The config's ``trust_checkpoint`` and
    ``allow_non_finite_weights`` keys apply to the process (:func:`~sapiens2.engine.checkpoint.set_checkpoint_policy`).
    ``load_from`` may be a Hub reference or a model alias (checked against the repository's ``config.json`` when it
    has one).

    ``--resume`` without a path continues from the checkpoint :func:`~sapiens2.engine.checkpoint.
    find_resume_checkpoint` chooses (the newest complete one when the recorded one is truncated); a truncated
    checkpoint given with ``--resume PATH`` raises an error naming it and the newest complete one.
    """

    load_strict: bool = True

    @classmethod
    def from_cfg(cls, cfg: Config) -> 'Sapiens2Runner':
        apply_config_checkpoint_policy(cfg)
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
        check_checkpoint_fit(model, path)
        checkpoint = _load_checkpoint(path, map_location=map_location)
        self.call_hook('after_load_checkpoint', checkpoint=checkpoint)
        state_dict = extract_state_dict(checkpoint, str(filename))
        for pattern, replacement in revise_keys:
            state_dict = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state_dict.items())
        load_model_weights(model, state_dict, strict=self.load_strict if strict is None else strict,
                           source=str(filename))
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
        super().resume(filename, resume_optimizer, resume_param_scheduler, map_location)
