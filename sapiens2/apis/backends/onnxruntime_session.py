"""An ONNX Runtime session over torch tensors, with its execution providers checked first.

onnxruntime is optional (``requirements/optional.txt``): a missing package, or an execution provider that the
installed build does not have, is one line naming the package to install.
"""
import re
from typing import List, Optional, Sequence, Union

import torch
from torch import Tensor

ProviderT = Union[str, tuple]
#: The pip package that brings each execution provider (``onnxruntime.get_available_providers()`` names).
PROVIDER_PACKAGES = {
    'CPUExecutionProvider': 'onnxruntime',
    'CUDAExecutionProvider': 'onnxruntime-gpu',
    'TensorrtExecutionProvider': 'onnxruntime-gpu (with TensorRT installed)',
    'ROCMExecutionProvider': 'onnxruntime-rocm',
    'MIGraphXExecutionProvider': 'onnxruntime-rocm',
    'OpenVINOExecutionProvider': 'onnxruntime-openvino',
    'DmlExecutionProvider': 'onnxruntime-directml',
    'CoreMLExecutionProvider': 'onnxruntime (the macOS build)',
}


def import_onnxruntime():
    """The ``onnxruntime`` module; an ``ImportError`` in one line saying what to install when it is missing."""
    try:
        import onnxruntime
    except ImportError as err:
        raise ImportError('the onnxruntime backend needs onnxruntime: pip install onnxruntime (onnxruntime-gpu for '
                          'CUDA), or pip install -r requirements/optional.txt') from err
    return onnxruntime


def default_providers(device: str = 'cpu') -> List[ProviderT]:
    """The providers for a device: ``cpu`` -> CPU; ``cuda[:N]`` -> CUDA on GPU N (CPU for the operators it lacks)."""
    match = re.fullmatch(r'cuda(?::(\d+))?', str(device))
    if match is None:
        return ['CPUExecutionProvider']
    return [('CUDAExecutionProvider', dict(device_id=int(match.group(1) or 0))), 'CPUExecutionProvider']


def check_providers(providers: Sequence[ProviderT]) -> None:
    """Raise ``ValueError`` in one line for a provider the installed onnxruntime does not have, naming the ones it
    has and the package that brings the missing one."""
    available = import_onnxruntime().get_available_providers()
    for provider in providers:
        name = provider[0] if isinstance(provider, (tuple, list)) else provider
        if name not in available:
            package = PROVIDER_PACKAGES.get(name, 'the onnxruntime build that provides it')
            raise ValueError(f'ONNX Runtime execution provider {name} is not available here (available: '
                             f'{", ".join(available)}); it comes with {package}, installed instead of onnxruntime')


def create_session(ort, path: str, options, providers: Sequence[ProviderT]):
    """``ort.InferenceSession``; a model this onnxruntime cannot run (an operator or opset newer than the build, e.g.
    opset 23's ``Attention`` before its CPU kernel existed) is one ``ValueError`` line saying what to do."""
    from onnxruntime.capi.onnxruntime_pybind11_state import InvalidGraph, InvalidProtobuf, NotImplemented
    try:
        return ort.InferenceSession(path, sess_options=options, providers=list(providers))
    except InvalidProtobuf as err:
        raise ValueError(f'{path} is not a complete ONNX model (truncated or damaged: onnxruntime cannot parse it); '
                         'copy the bundle again, or export it again with tools/deploy/export.py') from err
    except (InvalidGraph, NotImplemented) as err:
        reason = str(err).strip().splitlines()[0]
        raise ValueError(f'onnxruntime {ort.__version__} cannot run {path} ({reason}): install a newer one (pip '
                         'install -U onnxruntime), or export the model again with tools/deploy/export.py '
                         '--opset 18') from err


class OnnxRuntimeSession:
    """``onnxruntime.InferenceSession`` of one ONNX file taking and returning torch tensors (float32, CPU).

    Args:
        path: The ONNX file (one input, the image batch).
        providers: Execution providers (names, or ``(name, options)``), passed to ONNX Runtime as they are;
            default CPU.
        threads: Intra-op threads; default ``torch.get_num_threads()``, so that both backends use the process's
            thread setting (``OMP_NUM_THREADS``, ``torch.set_num_threads``).
    """

    def __init__(self, path: str, providers: Optional[Sequence[ProviderT]] = None,
                 threads: Optional[int] = None) -> None:
        ort = import_onnxruntime()
        self.providers = list(providers or default_providers())
        check_providers(self.providers)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        options.inter_op_num_threads = 1
        self.session = create_session(ort, path, options, self.providers)
        self.input_name = self.session.get_inputs()[0].name

    def signature(self, which: str) -> List[tuple]:
        """(name, shape) of the graph's ``'inputs'`` or ``'outputs'``; a symbolic dimension is its name (a str)."""
        args = self.session.get_inputs() if which == 'inputs' else self.session.get_outputs()
        return [(arg.name, list(arg.shape)) for arg in args]

    def __call__(self, inputs: Tensor) -> List[Tensor]:
        feed = {self.input_name: inputs.detach().to('cpu', torch.float32).contiguous().numpy()}
        return [torch.from_numpy(out) for out in self.session.run(None, feed)]
