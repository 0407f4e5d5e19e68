"""FSDP auto-wrap policy and activation-checkpointing predicate selecting modules by class name.

Registered in MMEngine's root FUNCTIONS so configs can name them, e.g.
``auto_wrap_policy=dict(type='wrap_modules_by_class_name', class_names=['Sapiens2Block'])``.
"""
from collections.abc import Sequence

import torch.nn as nn
from mmengine.registry import FUNCTIONS


@FUNCTIONS.register_module()
def wrap_modules_by_class_name(module: nn.Module, recurse: bool, nonwrapped_numel: int,
                               class_names: Sequence[str] = ()) -> bool:
    """FSDP auto-wrap policy: give every module whose class is in ``class_names`` its own FSDP unit."""
    return recurse or type(module).__name__ in class_names


@FUNCTIONS.register_module()
def checkpoint_modules_by_class_name(module: nn.Module, class_names: Sequence[str] = ()) -> bool:
    """``check_fn`` for activation checkpointing: recompute modules whose class is in ``class_names``."""
    return type(module).__name__ in class_names
