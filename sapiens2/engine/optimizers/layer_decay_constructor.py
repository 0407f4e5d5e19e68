"""Layer-wise learning-rate decay of the official Sapiens2 recipe, robust to DDP/FSDP wrapping."""
import re
from typing import Dict, List, Optional, Tuple

import torch
from mmengine.optim import DefaultOptimWrapperConstructor, OptimWrapper
from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIM_WRAPPERS, OPTIMIZERS
from torch import nn

# Name segments that model wrappers insert (DDP, FSDP, activation checkpointing, torch.compile).
_WRAPPER_SEGMENTS = re.compile(r'(^|\.)(module|_fsdp_wrapped_module|_checkpoint_wrapped_module|_orig_mod)(?=\.)')
_EMBEDDING_NAMES = ('cls_token', 'storage_tokens', 'pos_embed', 'mask_token')


def clean_param_name(name: str) -> str:
    """Removes wrapper segments: ``module._fsdp_wrapped_module.backbone.x`` -> ``backbone.x``."""
    return _WRAPPER_SEGMENTS.sub('', name).lstrip('.')


def get_layer_id(name: str, num_layers: int, backbone_prefix: str = 'backbone.') -> int:
    """Layer id of a clean parameter name: embeddings 0, block i -> i + 1, everything else num_layers + 1."""
    if name.startswith(backbone_prefix):
        local = name[len(backbone_prefix):]
        if local in _EMBEDDING_NAMES or local.startswith(('patch_embed.', 'tokenizer.')):
            return 0
        match = re.match(r'blocks\.(\d+)\.', local)
        if match:
            return int(match.group(1)) + 1
    return num_layers + 1


def original_shapes(model: nn.Module) -> Dict[str, torch.Size]:
    """Clean name -> shape before any FSDP flattening, for every parameter of ``model``."""
    shapes = {clean_param_name(n): p.shape for n, p in model.named_parameters()}
    for module_name, module in model.named_modules():
        flat = getattr(module, '_flat_param', None)
        if flat is None:
            flat = getattr(getattr(module, '_handle', None), 'flat_param', None)
        for fqn, shape in zip(getattr(flat, '_fqns', ()), getattr(flat, '_shapes', ())):
            shapes[clean_param_name(f'{module_name}.{fqn}' if module_name else fqn)] = shape
    return shapes


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class Sapiens2LayerDecayOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """Builds parameter groups with ``lr = base_lr * rate ** (num_layers + 1 - layer_id)`` (see ``get_layer_id``).

    Weight decay is disabled for parameters that are 1-D in their original shape, names ending in ``.bias`` and
    names containing any of ``no_decay_names``. Frozen parameters are skipped; groups are formed per unique
    (lr, weight decay).

    ``paramwise_cfg`` keys: ``layer_decay_rate`` (default 1.0), ``num_layers`` (default: the backbone's
    ``num_layers``), ``backbone_prefix`` (default ``'backbone.'``), ``no_decay_names`` (default ``('pos_embed',)``;
    pretraining adds special tokens).
    """

    def __init__(self, optim_wrapper_cfg: dict, paramwise_cfg: Optional[dict] = None) -> None:
        paramwise_cfg = dict(paramwise_cfg or {})
        self.layer_decay_rate = float(paramwise_cfg.pop('layer_decay_rate', 1.0))
        self.num_layers = paramwise_cfg.pop('num_layers', None)
        self.backbone_prefix = paramwise_cfg.pop('backbone_prefix', 'backbone.')
        self.no_decay_names = tuple(paramwise_cfg.pop('no_decay_names', ('pos_embed', )))
        if paramwise_cfg:
            raise ValueError(f'Unknown paramwise_cfg keys {sorted(paramwise_cfg)} for '
                             f'Sapiens2LayerDecayOptimWrapperConstructor; valid: layer_decay_rate, num_layers, '
                             f'backbone_prefix, no_decay_names.')
        super().__init__(optim_wrapper_cfg, None)

    def _num_layers(self, model: nn.Module) -> int:
        if self.num_layers is not None:
            return int(self.num_layers)
        for name, module in model.named_modules():
            if clean_param_name(name + '.x') == self.backbone_prefix + 'x' and hasattr(module, 'num_layers'):
                return int(module.num_layers)
        raise ValueError(f'Cannot find a backbone with `num_layers` under prefix {self.backbone_prefix!r}; set '
                         f'paramwise_cfg.num_layers or paramwise_cfg.backbone_prefix.')

    def param_groups(self, model: nn.Module) -> List[dict]:
        """The optimizer parameter groups for ``model`` (wrapped or not)."""
        num_layers = self._num_layers(model)
        shapes = original_shapes(model)
        base_lr = self.optimizer_cfg['lr']
        base_wd = self.optimizer_cfg.get('weight_decay', 0.0)
        groups: Dict[Tuple[float, float], dict] = {}
        for raw_name, param in model.named_parameters():
            if not param.requires_grad:
                continue
            name = clean_param_name(raw_name)
            layer_id = get_layer_id(name, num_layers, self.backbone_prefix)
            no_decay = len(shapes.get(name, param.shape)) == 1 or name.endswith('.bias') or any(
                key in name for key in self.no_decay_names)
            lr = base_lr * self.layer_decay_rate**(num_layers + 1 - layer_id)
            wd = 0.0 if no_decay else base_wd
            group = groups.setdefault((lr, wd), dict(params=[], lr=lr, weight_decay=wd, param_names=[],
                                                     layer_id=layer_id))
            group['params'].append(param)
            group['param_names'].append(name)
        return list(groups.values())

    def __call__(self, model: nn.Module) -> OptimWrapper:
        optim_wrapper_cfg = self.optim_wrapper_cfg.copy()
        optim_wrapper_cfg.setdefault('type', 'OptimWrapper')
        optimizer_cfg = self.optimizer_cfg.copy()
        optimizer_cfg['params'] = self.param_groups(model)
        optimizer = OPTIMIZERS.build(optimizer_cfg)
        return OPTIM_WRAPPERS.build(optim_wrapper_cfg, default_args=dict(optimizer=optimizer))

