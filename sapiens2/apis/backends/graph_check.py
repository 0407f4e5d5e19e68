"""A read bundle checked against its ONNX graph and its config's head, before anything runs.

:func:`check_graph` compares the manifest's input and outputs with the ONNX session's,
:func:`check_preprocess_in_graph` the manifest's normalisation with the graph's constants, and
:func:`check_config_outputs` the recorded outputs with those of the config's head. Each problem is one
:class:`BundleError` line. (The manifest's own fields: :mod:`.manifest_check`.)
"""
from typing import TYPE_CHECKING, List, Optional, Tuple

from .bundle import Bundle
from .bundle_error import BundleError
from .manifest_check import EXPORT_HINT

if TYPE_CHECKING:
    from torch import nn


def check_graph(bundle: Bundle, inputs: List[Tuple[str, list]], outputs: List[Tuple[str, list]],
                onnx_path: str) -> None:
    """Compare the ONNX graph's inputs and outputs ((name, shape) pairs, a dimension a str when symbolic) with the
    manifest's ``input_size`` and ``outputs``; :class:`BundleError` when they disagree (another model's file, or an
    edited manifest)."""
    problems = []
    height, width = bundle.input_size
    if len(inputs) != 1 or _static(inputs[0][1])[1:] not in ([3, height, width], [None, None, None]):
        problems.append(f'the graph takes {_shown(inputs)} but the manifest gives input_size [{height}, {width}] '
                        '(one input of [batch, 3, H, W])')
    expected = bundle.outputs['shapes']
    if len(outputs) != len(expected):
        problems.append(f'the graph has {len(outputs)} outputs ({_shown(outputs)}) but the manifest lists '
                        f'{len(expected)}')
    else:
        for (name, shape), want in zip(outputs, expected):
            have = _static(shape)
            if len(have) != len(want) or any(h is not None and h != w for h, w in zip(have[1:], want[1:])):
                problems.append(f'output {name} is {_dims(shape)} in the graph but {want} in the manifest')
    if problems:
        raise BundleError(f'bundle {bundle.folder}: {onnx_path} does not match its manifest: ' + '; '.join(problems)
                          + '; the ONNX file belongs to another model or the manifest was edited: '
                          + EXPORT_HINT)


def check_preprocess_in_graph(bundle: Bundle, onnx_path: str) -> None:
    """``preprocess.in_graph`` against the graph: export puts the normalisation in the graph as two float32
    constants, the mean and the std (``ExportableModel``); the file holds their bytes exactly when it normalises its
    input itself. (A byte search over the memory-mapped file: the graph is not parsed, whatever its size.)"""
    import mmap

    import numpy as np
    constants = [np.asarray(bundle.preprocess[key], np.float32).tobytes() for key in ('mean', 'std')]
    with open(onnx_path, 'rb') as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        holds = all(data.find(constant) >= 0 for constant in constants)
    in_graph = bundle.preprocess['in_graph']
    if holds != in_graph:
        says = ('normalises its input itself (it holds the mean and std constants)' if holds else
                "holds no normalisation with the manifest's mean and std")
        effect = 'twice' if holds else 'never'
        raise BundleError(f'bundle {bundle.folder}: preprocess.in_graph is {str(in_graph).lower()} but {onnx_path} '
                          f'{says}: the images would be normalised {effect}; {EXPORT_HINT}')


def check_config_outputs(bundle: Bundle, model: 'nn.Module') -> None:
    """The manifest's ``outputs`` against those of the bundle's config: its model (built on the ``meta`` device, so
    no weight is allocated and nothing is computed) runs on a meta batch of ``input_size``, giving the structure and
    shapes export records (export's ``output_spec``). A model that cannot run on the meta device
    is not checked here (:func:`check_graph` still compares the graph with the manifest)."""
    import torch
    head = model.head if hasattr(model, 'head') else model.decode_head
    try:
        with torch.device('meta'), torch.no_grad():
            out = head.forward(model.extract_feat(torch.empty(1, 3, *bundle.input_size)))
    except Exception:  # noqa: BLE001  (an operator without a meta kernel: left to check_graph)
        return
    structure = 'dict' if isinstance(out, dict) else type(out).__name__ if isinstance(out, (tuple, list)) else 'tensor'
    values = list(out.values()) if isinstance(out, dict) else list(out) if structure != 'tensor' else [out]
    shapes = [['batch', *value.shape[1:]] for value in values]
    recorded = bundle.outputs
    if structure != recorded['structure'] or shapes != recorded['shapes']:
        raise BundleError(f'bundle {bundle.folder}: its manifest records outputs {recorded["structure"]} '
                          f'{recorded["shapes"]} but the {type(head).__name__} of its config returns {structure} '
                          f'{shapes}; the ONNX file or the config belongs to another model, or the manifest was '
                          f'edited: {EXPORT_HINT}')


def _static(shape) -> List[Optional[int]]:
    return [dim if isinstance(dim, int) else None for dim in shape]


def _dims(shape) -> str:
    return '[' + ', '.join(str(dim) if isinstance(dim, int) else 'batch' for dim in shape) + ']'


def _shown(pairs) -> str:
    return ', '.join(f'{name} {_dims(shape)}' for name, shape in pairs)
