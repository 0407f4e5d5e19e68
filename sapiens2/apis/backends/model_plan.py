"""Which backend runs a model given to the inferencer, and building it: torch for configs and aliases, onnxruntime
for exported bundles (folders written by ``tools/deploy/export.py``; :mod:`~.bundle`)."""
from dataclasses import dataclass
from typing import Optional, Sequence

from torch import nn

from sapiens2.hub.model_zoo import resolve_model
from sapiens2.utils.devices import resolve_device, resolve_dtype

from ..builder import init_model
from .bundle import is_bundle

BACKENDS = ('torch', 'onnxruntime')


@dataclass
class ModelPlan:
    """One model of an inferencer, checked before anything is built."""
    model: str
    weights: Optional[str]
    backend: str
    device: str
    dtype: str
    #: Why ``dtype`` was picked when the inferencer was given ``auto`` (empty otherwise).
    why: str = ''


def choose_backend(model: str, backend: Optional[str] = None) -> str:
    """``backend``, checked against ``model``; None: ``onnxruntime`` for a folder (a bundle), else ``torch``."""
    bundle = is_bundle(model)
    if backend is None:
        return 'onnxruntime' if bundle else 'torch'
    if backend not in BACKENDS:
        raise ValueError(f'backend {backend!r} is not known; backends: {", ".join(BACKENDS)}')
    if backend == 'onnxruntime' and not bundle:
        raise ValueError(f'the onnxruntime backend runs exported bundles (folders written by tools/deploy/export.py '
                         f'CONFIG CHECKPOINT --out FOLDER), and {model} is not a folder; export it, or use the torch '
                         'backend')
    if backend == 'torch' and bundle:
        raise ValueError(f'{model} is a folder, an exported bundle, which runs with the onnxruntime backend; give a '
                         'config and a checkpoint for the torch backend')
    return backend


def plan_model(model: str, weights: Optional[str], device: Optional[str], dtype: str,
               backend: Optional[str] = None, compile: bool = False) -> ModelPlan:
    """Check that ``model`` can run with ``backend`` on ``device`` in ``dtype`` (one-line errors), without building
    it; a bundle is read (:func:`~.bundle.read_bundle`) and must hold the ``dtype`` model. ``compile`` (the torch
    backend's compiled blocks) is refused for ONNX Runtime."""
    backend = choose_backend(model, backend)
    if compile and backend != 'torch':
        raise ValueError(f'compile runs torch models compiled; {model} runs with {backend} (an exported bundle is '
                         'already optimised by ONNX Runtime): leave out --compile')
    if backend == 'torch':
        device = resolve_device(device)
        return ModelPlan(model, weights, backend, device, *resolve_dtype(dtype, device, backend))
    from .bundle import read_bundle
    if weights is not None:
        raise ValueError(f'{model} is an exported bundle, which holds its weights; give no weights for it')
    device = resolve_device(device or _onnxruntime_default_device(), backend)
    bundle = read_bundle(model)
    dtype, why = resolve_dtype(dtype, device, backend, bundle.precisions())
    bundle.onnx_path(dtype)
    return ModelPlan(model, weights, backend, device, dtype, why)


def build_model(plan: ModelPlan, providers: Optional[Sequence] = None) -> nn.Module:
    """The planned model: :func:`~sapiens2.apis.builder.init_model` (torch) or
    :func:`~.onnxruntime_model.build_onnxruntime_model` (``providers`` as ONNX Runtime takes them;
    default from the device)."""
    if plan.backend == 'torch':
        return init_model(*resolve_model(plan.model, plan.weights), plan.device)
    from .bundle import read_bundle
    from .onnxruntime_model import build_onnxruntime_model
    return build_onnxruntime_model(read_bundle(plan.model), plan.device, plan.dtype, providers)


def _onnxruntime_default_device() -> str:
    """``cuda`` when the installed onnxruntime has the CUDA provider and torch sees a GPU, else ``cpu``."""
    import torch

    from .onnxruntime_session import import_onnxruntime
    has_cuda = 'CUDAExecutionProvider' in import_onnxruntime().get_available_providers()
    return 'cuda' if has_cuda and torch.cuda.is_available() else 'cpu'
