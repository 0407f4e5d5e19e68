"""``Sapiens2Runner``: MMEngine's Runner with strict, format-agnostic checkpoint loading."""
import re
from collections import OrderedDict
from typing import Callable, Union

from mmengine.config import Config
from mmengine.model import is_model_wrapper
from mmengine.registry import RUNNERS
from mmengine.runner import Runner
from mmengine.runner.checkpoint import _load_checkpoint

from .checkpoint import extract_state_dict, load_model_weights
from .checkpoint_integrity import incomplete_reason, newest_complete_checkpoint


@RUNNERS.register_module()
class Sapiens2Runner(Runner):
    """Runner whose ``load_from`` and ``--resume`` loads are strict unless the config sets ``load_strict = False``.

    MMEngine hard-codes ``strict=False`` there, which silently leaves random weights when key names differ.
    Checkpoint keys are adapted as in :func:`sapiens2.engine.checkpoint.load_model_weights` (``module.`` stripped,
    ``decode_head.`` -> ``head.`` for mmpose estimators).

    ``--resume`` without a path continues from the newest *complete* checkpoint of the work dir: when the one the
    ``last_checkpoint`` record names is truncated, it falls back to the newest complete ``iter_*``/``epoch_*`` file
    and says so. A truncated checkpoint given explicitly raises an error naming it.
    """

    load_strict: bool = True

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
        checkpoint = _load_checkpoint(filename, map_location=map_location)
        self.call_hook('after_load_checkpoint', checkpoint=checkpoint)
        model = self.model.module if is_model_wrapper(self.model) else self.model
        state_dict = extract_state_dict(checkpoint)
        for pattern, replacement in revise_keys:
            state_dict = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state_dict.items())
        load_model_weights(model, state_dict, strict=self.load_strict if strict is None else strict)
        self._has_loaded = True
        self.logger.info(f'Load checkpoint from {filename}')
        return checkpoint

    def resume(self, filename: str, resume_optimizer: bool = True, resume_param_scheduler: bool = True,
               map_location: Union[str, Callable] = 'default') -> None:
        reason = incomplete_reason(str(filename))
        if reason is not None:
            filename = self._complete_checkpoint_instead(str(filename), reason)
        super().resume(filename, resume_optimizer, resume_param_scheduler, map_location)

    def _complete_checkpoint_instead(self, filename: str, reason: str) -> str:
        """The checkpoint to resume from when ``filename`` is incomplete (automatic resume only)."""
        fallback, skipped = newest_complete_checkpoint(self.work_dir, exclude=filename)
        if self._load_from is not None:  # --resume PATH: the user chose this file
            hint = f'; the newest complete checkpoint of the work dir is {fallback}' if fallback else ''
            raise ValueError(f'Cannot resume from {filename}: the file is truncated or damaged ({reason}){hint}.')
        if fallback is None:
            raise ValueError(f'Cannot resume: the latest checkpoint {filename} is truncated or damaged ({reason}) and '
                             f'{self.work_dir} holds no other complete iter_*/epoch_* checkpoint. Train without '
                             '--resume, or give a checkpoint with --resume PATH.')
        others = ''.join(f', {path} ({why})' for path, why in skipped)
        self.logger.warning(f'The latest checkpoint {filename} is truncated or damaged ({reason}){others}; resuming '
                            f'from {fallback}, the newest complete checkpoint (the iterations after it are trained '
                            'again).')
        return fallback
