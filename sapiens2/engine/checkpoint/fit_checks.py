"""The registry of fit checks: checks of a checkpoint file against the model it is about to be loaded into (e.g.
``sapiens2.hub`` compares a Hub snapshot's ``config.json`` with the model); they live with the code that knows the
files, so that this package imports no model class."""
from typing import Callable, List

from torch import nn

_FIT_CHECKS: List[Callable[..., None]] = []


def register_checkpoint_check(check: Callable[..., None]) -> None:
    """Make ``check(model, checkpoint_file, compare_labels=...)`` run before any checkpoint file is loaded into a model
    (:func:`~sapiens2.engine.checkpoint.load_model_weights`, :func:`~sapiens2.engine.checkpoint.
    read_model_checkpoint`, the runner's ``load_from``); it raises to refuse the file and ignores models it knows
    nothing about. Registering the same function again does nothing."""
    if check not in _FIT_CHECKS:
        _FIT_CHECKS.append(check)


def check_checkpoint_fit(model: nn.Module, checkpoint_file: str, compare_labels: bool = True) -> None:
    """Run the registered fit checks of ``model`` against the local ``checkpoint_file``; the number of labels is
    compared only with ``compare_labels`` (not when fine-tuning to another layout)."""
    for check in _FIT_CHECKS:
        check(model, checkpoint_file, compare_labels=compare_labels)
