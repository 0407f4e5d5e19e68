"""DDP and FSDP strategies for MMEngine's ``FlexibleRunner`` that run on GPUs and, for tests, on CPUs (gloo)."""
from functools import partial

from mmengine._strategy import DDPStrategy, FSDPStrategy
from mmengine.model import is_model_wrapper
from mmengine.registry import FUNCTIONS, STRATEGIES
from mmengine.runner.checkpoint import weights_to_cpu
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.api import FullOptimStateDictConfig, FullStateDictConfig

from .env import has_accelerator, init_distributed

AMP_WRAPPERS = ('AmpOptimWrapper', 'Sapiens2AmpOptimWrapper')
WRAPPER_STATE_KEYS = ('loss_scaler', 'base_param_settings')  # OptimWrapper state beside the optimizer's


@STRATEGIES.register_module()
class Sapiens2DDPStrategy(DDPStrategy):
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


@STRATEGIES.register_module()
class Sapiens2FSDPStrategy(FSDPStrategy):
    """``FSDPStrategy`` that also runs on CPUs, and whose ``activation_checkpointing.check_fn`` may carry arguments.

    Differences from MMEngine's class: the default wrapper is ``Sapiens2FullyShardedDataParallel``; a dict
    ``check_fn=dict(type=..., **kw)`` is bound to its own ``kw`` (MMEngine binds the outer dict's keys instead);
    without a GPU, full state dicts are gathered without ``offload_to_cpu`` (already on the CPU; offloading crashed
    rank 0 on torch 2.13); an ``AmpOptimWrapper``/``Sapiens2AmpOptimWrapper`` gets ``use_fsdp=True``; resuming
    passes torch's current argument order to ``FSDP.optim_state_dict_to_load``.
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
