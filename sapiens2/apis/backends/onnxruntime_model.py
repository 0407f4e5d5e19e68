"""A bundle's task model with ONNX Runtime in place of the exported forward, for the inference tasks.

The bundle's ONNX graph is ``head.forward(extract_feat(x))`` (export's ``ExportableModel``).
:func:`build_onnxruntime_model` builds the estimator of the bundle's config on the ``meta`` device (no weights are
allocated), makes its ``extract_feat`` run the session and its head's ``forward`` hand the session's outputs on.
Everything else stays the model's own code: the data preprocessor, ``test_step``/``predict``, test-time flip (the
session runs on the flipped batch as the backbone would), the head's decoding and the mapping back to the image, so
the inference tasks (cropping, decoding, tracking, drawing, writing) run it as they run the torch model.
"""
from typing import Optional, Sequence

import torch
from mmengine.registry import MODELS, init_default_scope
from torch import Tensor, nn

from sapiens2.engine.launch import load_config

from ..builder import json_dataset_meta
from .bundle import Bundle
from .graph_check import check_config_outputs, check_graph, check_preprocess_in_graph
from .onnxruntime_session import OnnxRuntimeSession, ProviderT, default_providers

#: The name inference tasks check dtypes with (:data:`sapiens2.utils.devices.DTYPES_BY_BACKEND_DEVICE`).
BACKEND = 'onnxruntime'


class ExportedForward:
    """``extract_feat`` replaced: the image batch -> the session's outputs, in the structure the head's ``forward``
    returns (a tensor, a tuple/list, or a dict; the bundle's ``outputs``)."""

    def __init__(self, session: OnnxRuntimeSession, outputs: dict, input_size: Sequence[int], name: str) -> None:
        self.session, self.outputs, self.input_size, self.name = session, outputs, tuple(input_size), name

    def __call__(self, inputs: Tensor):
        if tuple(inputs.shape[-2:]) != self.input_size:
            raise ValueError(f'{self.name}: the test pipeline gave a {tuple(inputs.shape[-2:])} (H, W) batch, but the '
                             f'exported model takes {self.input_size}; export it at that size')
        values = [value.to(inputs.device) for value in self.session(inputs)]
        structure = self.outputs['structure']
        if structure == 'tensor':
            return values[0]
        if structure == 'dict':
            return dict(zip(self.outputs['names'], values))
        return tuple(values) if structure == 'tuple' else values


def _passthrough(outputs):
    """The head's ``forward`` once the session computed it."""
    return outputs


def build_onnxruntime_model(bundle: Bundle, device: str = 'cpu', dtype: str = 'fp32',
                            providers: Optional[Sequence[ProviderT]] = None) -> nn.Module:
    """The bundle's estimator in eval mode with the ``dtype`` ONNX model (``fp32``, ``int8``) on ``providers``
    (default: :func:`~.onnxruntime_session.default_providers` of ``device``); ``cfg`` and
    ``dataset_meta`` attached as :func:`sapiens2.apis.init_model` attaches them. Inputs and decoding stay on the
    CPU; ONNX Runtime moves the batch to its provider's device."""
    cfg = load_config(bundle.config(), check_data_layout=False)  # read as data, never run
    session = OnnxRuntimeSession(bundle.onnx_path(dtype), providers or default_providers(device))
    check_graph(bundle, session.signature('inputs'), session.signature('outputs'), bundle.onnx_path(dtype))
    check_preprocess_in_graph(bundle, bundle.onnx_path(dtype))
    init_default_scope(cfg.get('default_scope', 'sapiens2'))
    model_cfg = cfg.model.copy()
    if isinstance(model_cfg.get('backbone'), dict):
        model_cfg.backbone = dict(model_cfg.backbone, init_cfg=None)
    with torch.device('meta'):
        model = MODELS.build(model_cfg)
    check_config_outputs(bundle, model)
    _materialise_preprocessor(model.data_preprocessor, bundle)
    head = model.head if hasattr(model, 'head') else model.decode_head
    model.extract_feat = ExportedForward(session, bundle.outputs, bundle.input_size, bundle.folder)
    head.forward = _passthrough
    model.backbone = None  # its weights are in the session
    model.cfg = cfg
    if bundle.dataset_meta:
        model.dataset_meta = json_dataset_meta(bundle.dataset_meta)
    model.inference_backend = BACKEND
    return model.eval()


def _materialise_preprocessor(preprocessor: nn.Module, bundle: Bundle) -> None:
    """Give the (meta) data preprocessor real mean/std buffers (the bundle's values), or leave normalisation and
    BGR->RGB to the graph when the bundle has them inside."""
    preprocessor.to_empty(device='cpu')
    buffers = dict(preprocessor.named_buffers())
    unknown = set(buffers) - {'mean', 'std'} or {name for name, _ in preprocessor.named_parameters()}
    if unknown:
        raise ValueError(f'bundle {bundle.folder}: the data preprocessor {type(preprocessor).__name__} has state '
                         f'{sorted(unknown)} that a bundle does not record; run it with the torch backend')
    for name in ('mean', 'std'):
        if name in buffers:
            buffers[name].copy_(torch.tensor(bundle.preprocess[name]).view_as(buffers[name]))
    if bundle.preprocess.get('in_graph'):
        preprocessor._enable_normalize = False
        for flag in ('_channel_conversion', 'channel_conversion'):
            if hasattr(preprocessor, flag):
                setattr(preprocessor, flag, False)
