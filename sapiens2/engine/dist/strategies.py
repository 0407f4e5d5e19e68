"""DDP and FSDP strategies for MMEngine's ``FlexibleRunner`` that run on GPUs and, for tests, on CPUs (gloo).

Both load checkpoints with sapiens2's policy (strict, finite weights, key adaptation; sapiens2.engine.checkpoint):
``load_from`` is strict unless the config sets ``load_strict = False``, ``--resume`` always.
"""
import re
from collections import OrderedDict
from functools import partial

from mmengine._strategy import DDPStrategy, FSDPStrategy
from mmengine.model import is_model_wrapper
from mmengine.registry import FUNCTIONS, STRATEGIES
from mmengine.runner.checkpoint import weights_to_cpu
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp._common_utils import clean_tensor_name
from torch.distributed.fsdp.api import FullOptimStateDictConfig, FullStateDictConfig

from ..checkpoint import CheckpointMismatchError, load_model_weights, prepare_state_dict
from .env import has_accelerator, init_distributed

AMP_WRAPPERS = ('AmpOptimWrapper', 'Sapiens2AmpOptimWrapper')
WRAPPER_STATE_KEYS = ('loss_scaler', 'base_param_settings')  # OptimWrapper state beside the optimizer's
DEFAULT_REVISE_KEYS = [(r'^module.', '')]


def _revise(state_dict: dict, revise_keys: list) -> dict:
    for pattern, replacement in revise_keys:
        state_dict = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in state_dict.items())
    return state_dict


class _CheckpointPolicyMixin:
    """``load_checkpoint`` strict by default (MMEngine's resume calls it without ``strict``), remembering the file
    name for the error messages of ``load_model_state_dict``."""

    _checkpoint_source = 'the checkpoint'

    def load_checkpoint(self, filename: str, *, strict: bool = True, **kwargs) -> dict:
        self._checkpoint_source = str(filename)
        return super().load_checkpoint(filename, strict=strict, **kwargs)


@STRATEGIES.register_module()
class Sapiens2DDPStrategy(_CheckpointPolicyMixin, DDPStrategy):
    """``DDPStrategy`` with a gloo process group and ``Sapiens2DistributedDataParallel`` when there is no GPU.

    Checkpoints hold the unwrapped model's keys (MMEngine's ``DDPStrategy`` saves them with a ``module.`` prefix).
    """

    def __init__(self, *, model_wrapper: dict | None = None, **kwargs):
        model_wrapper = dict(type='Sapiens2DistributedDataParallel', **(model_wrapper or {}))
        super().__init__(model_wrapper=model_wrapper, **kwargs)

    def _setup_distributed(self, launcher: str = 'pytorch', backend: str = 'nccl', **kwargs) -> None:
        init_distributed(launcher, backend, **kwargs)

    def model_state_dict(self) -> dict:
        """The unwrapped model's weights (no ``module.`` prefix), as ``Runner`` and FSDP checkpoints hold them."""
        model = self.model.module if is_model_wrapper(self.model) else self.model
        return weights_to_cpu(model.state_dict())

    def load_model_state_dict(self, state_dict: dict, *, strict: bool = True,
                              revise_keys: list = DEFAULT_REVISE_KEYS) -> None:
        """Load into the unwrapped model with :func:`~sapiens2.engine.checkpoint.load_model_weights`."""
        model = self.model.module if is_model_wrapper(self.model) else self.model
        load_model_weights(model, _revise(state_dict, revise_keys), strict=strict, source=self._checkpoint_source)


@STRATEGIES.register_module()
class Sapiens2FSDPStrategy(_CheckpointPolicyMixin, FSDPStrategy):
    """``FSDPStrategy`` that also runs on CPUs, and whose ``activation_checkpointing.check_fn`` may carry arguments.

    Differences from MMEngine's class: the default wrapper is ``Sapiens2FullyShardedDataParallel``; a dict
    ``check_fn=dict(type=..., **kw)`` is bound to its own ``kw`` (MMEngine binds the outer dict's keys instead);
    without a GPU, full state dicts are gathered without ``offload_to_cpu`` (already on the CPU; offloading crashed
    rank 0 on torch 2.13); an ``AmpOptimWrapper``/``Sapiens2AmpOptimWrapper`` gets ``use_fsdp=True``; resuming
    passes torch's current argument order to ``FSDP.optim_state_dict_to_load``; full state dicts load with
    sapiens2's checks (MMEngine loads them with ``strict=False``, and FSDP's own strict load does not report
    missing keys).
    """

    def __init__(self, *, model_wrapper: dict | None = None, activation_checkpointing: dict | None = None,
                 **kwargs):
        model_wrapper = dict(type='Sapiens2FullyShardedDataParallel', **(model_wrapper or {}))
        if activation_checkpointing is not None:
            activation_checkpointing = _bind_check_fn(activation_checkpointing)
        super().__init__(model_wrapper=model_wrapper, activation_checkpointing=activation_checkpointing, **kwargs)
        if not has_accelerator():
            for config in (self.state_dict_config, self.optim_state_dict_config):
                if isinstance(config, (FullStateDictConfig, FullOptimStateDictConfig)):
                    config.offload_to_cpu = False

    def _setup_distributed(self, launcher: str = 'pytorch', backend: str = 'nccl', **kwargs) -> None:
        init_distributed(launcher, backend, **kwargs)

    def load_model_state_dict(self, state_dict: dict, *, strict: bool = True,
                              revise_keys: list = DEFAULT_REVISE_KEYS) -> None:
        """Check a full state dict against the wrapped model's parameter and buffer names, then load it."""
        names = _full_state_dict_names(self.model)
        if not self._is_full_state_dict() or names is None:
            super().load_model_state_dict(state_dict, strict=strict)
            return
        source = self._checkpoint_source
        state_dict, _, _ = prepare_state_dict(_revise(state_dict, revise_keys), self.model.module,
                                              dict.fromkeys(names), source, strict)
        try:
            self.model.load_state_dict(state_dict, strict=False)
        except RuntimeError as err:  # shapes: FSDP parameters are flat shards, so torch checks them while loading
            raise CheckpointMismatchError(f'Checkpoint {source} does not match the model: {err}') from err

    def load_optim_state_dict(self, state_dict: dict) -> None:
        """Load an optimizer state saved by :meth:`optim_state_dict` into the sharded optimizer.

        MMEngine 0.10.7 calls ``FSDP.optim_state_dict_to_load(state_dict, model, optim)``, the argument order
        before torch 2.1, so resuming fails on current torch; the wrapper's own keys (loss scaler) pass through.
        """
        extra = {k: state_dict.pop(k) for k in WRAPPER_STATE_KEYS if k in state_dict}
        state_dict = FSDP.optim_state_dict_to_load(self.model, self.optim_wrapper.optimizer, state_dict)
        self.optim_wrapper.load_state_dict({**state_dict, **extra})

    def build_optim_wrapper(self, optim_wrapper, model=None):
        """Build as MMEngine does, marking AMP wrappers (ours included) as FSDP-sharded."""
        if isinstance(optim_wrapper, dict) and optim_wrapper.get('type') in AMP_WRAPPERS:
            optim_wrapper.setdefault('use_fsdp', True)
        return super().build_optim_wrapper(optim_wrapper, model)


def _full_state_dict_names(model) -> list | None:
    """The keys of ``model``'s full state dict (FSDP and activation-checkpoint wrapper prefixes removed), from its
    original parameters (``use_orig_params=True``) and persistent buffers; None when FSDP hides the original
    parameters in flat ones."""
    names = []
    for name, _ in model.named_parameters():
        if name.endswith('_flat_param'):
            return None
        names.append(clean_tensor_name(name))
    for module_name, module in model.named_modules():
        for name, buffer in module._buffers.items():
            if buffer is not None and name not in module._non_persistent_buffers_set:
                names.append(clean_tensor_name(f'{module_name}.{name}' if module_name else name))
    return names


def _bind_check_fn(cfg: dict) -> dict:
    """Resolve ``check_fn=dict(type=name, **kw)`` to ``partial(fn, **kw)`` from the FUNCTIONS registry."""
    cfg = dict(cfg)
    check_fn = cfg.get('check_fn')
    if isinstance(check_fn, dict):
        check_fn = dict(check_fn)
        name = check_fn.pop('type')
        fn = FUNCTIONS.get(name) if isinstance(name, str) else name
        if fn is None:
            raise KeyError(f"activation_checkpointing.check_fn: '{name}' is not in the FUNCTIONS registry")
        cfg['check_fn'] = partial(fn, **check_fn)
    return cfg
