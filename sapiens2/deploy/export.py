"""Export a task model (backbone + head, optionally with its preprocessing) to torch.export and ONNX, with a parity
check against the eager model.

RoPE dtype: the ExportedProgram keeps the model's RoPE mode (bf16, as in the official backbone), so it
reproduces eager outputs exactly. ONNX is exported with fp32 RoPE (the same bf16-valued periods, tables and
rotation computed in fp32), because onnxruntime's CPU kernels have no bfloat16 Mul; its parity is checked against
the eager model switched to the same fp32 RoPE mode, and its deviation from the bf16-RoPE model is reported.
"""
import copy
from dataclasses import asdict, dataclass, field
from typing import Dict, Optional, Sequence, Tuple

import torch
from torch import Tensor, nn

from sapiens2.structures.layout import jsonable
from sapiens2.utils.atomic_save import AtomicOutput, atomic_output_with_siblings

from .onnx_opsets import DEFAULT_OPSET, ONNX_OPSETS

OutputT = Tuple[Tensor, ...]

class ExportParityError(RuntimeError):
    """The exported model's outputs differ from eager beyond the tolerance."""

@dataclass
class Tolerance:
    """``|exported - eager| <= atol + rtol * max|eager|`` per output."""
    atol: float = 1e-4
    rtol: float = 1e-4

@dataclass
class ParityReport:
    """Max absolute difference per output, the bound it was checked against, and whether it passed."""
    backend: str
    max_abs_diff: Sequence[float]
    bound: Sequence[float]
    passed: bool
    notes: Dict[str, float] = field(default_factory=dict)

class ExportableModel(nn.Module):
    """``model(x, mode='tensor')`` as a plain module returning a tuple of tensors.

    With ``include_preprocess`` the input is a float (B, 3, H, W) batch of **BGR pixels in [0, 255]** (an OpenCV
    image transposed to CHW) and the model's mean/std (and BGR->RGB) are applied inside the graph; otherwise the input
    is the already normalised RGB batch.
    """

    def __init__(self, model: nn.Module, include_preprocess: bool = True) -> None:
        super().__init__()
        self.model = model
        self.include_preprocess = include_preprocess
        if include_preprocess:
            mean, std, to_rgb = preprocess_params(model)
            self.register_buffer('mean', torch.tensor(mean).view(1, 3, 1, 1), persistent=False)
            self.register_buffer('std', torch.tensor(std).view(1, 3, 1, 1), persistent=False)
            self.to_rgb = to_rgb

    def forward(self, x: Tensor) -> OutputT:
        if self.include_preprocess:
            x = x.flip(1) if self.to_rgb else x
            x = (x - self.mean) / self.std
        out = self.model(x, None, mode='tensor')
        if isinstance(out, dict):
            out = tuple(out.values())
        return tuple(out) if isinstance(out, (tuple, list)) else (out, )

def preprocess_params(model: nn.Module) -> Tuple[list, list, bool]:
    """(mean, std, bgr_to_rgb) of a model's data preprocessor (the official values when it has none)."""
    pre = getattr(model, 'data_preprocessor', None)
    mean, std = getattr(pre, 'mean', None), getattr(pre, 'std', None)
    if mean is None or std is None:
        return [123.675, 116.28, 103.53], [58.395, 57.12, 57.375], True
    to_rgb = bool(getattr(pre, '_channel_conversion', getattr(pre, 'channel_conversion', False)))
    return mean.flatten().tolist(), std.flatten().tolist(), to_rgb

def set_rope_dtype(model: nn.Module, dtype: torch.dtype) -> int:
    """Switch every RoPE module of ``model`` to compute in ``dtype`` (keeping its period values); returns how many."""
    from sapiens2.models.layers.rope import RopePositionEmbedding
    count = 0
    for module in model.modules():
        if isinstance(module, RopePositionEmbedding):
            module.dtype = dtype
            module.periods = module.periods.to(dtype)
            count += 1
    return count

def rope_dtype(model: nn.Module) -> Optional[torch.dtype]:
    """The RoPE computation dtype of ``model`` (None if it has no RoPE)."""
    from sapiens2.models.layers.rope import RopePositionEmbedding
    return next((m.dtype for m in model.modules() if isinstance(m, RopePositionEmbedding)), None)

def check_parity(backend: str, reference: OutputT, candidate: Sequence[Tensor], tol: Tolerance) -> ParityReport:
    """Compare output tuples; raises :class:`ExportParityError` when any output exceeds the tolerance."""
    if len(reference) != len(candidate):
        raise ExportParityError(f'{backend}: {len(candidate)} outputs, eager has {len(reference)}')
    diffs, bounds = [], []
    for ref, out in zip(reference, candidate):
        ref, out = ref.detach().float().cpu(), torch.as_tensor(out).float().cpu()
        if ref.shape != out.shape:
            raise ExportParityError(f'{backend}: output shape {tuple(out.shape)} != eager {tuple(ref.shape)}')
        diffs.append(float((ref - out).abs().max()))
        bounds.append(tol.atol + tol.rtol * float(ref.abs().max()))
    report = ParityReport(backend, diffs, bounds, all(d <= b for d, b in zip(diffs, bounds)))
    if not report.passed:
        raise ExportParityError(f'{backend} outputs differ from eager: max abs diff {diffs} > bound {bounds}')
    return report

def export_program(module: nn.Module, example: Tensor, dynamic_batch: bool = True) -> torch.export.ExportedProgram:
    """``torch.export`` of an :class:`ExportableModel` (fixed H, W; dynamic batch by default)."""
    dynamic_shapes = {'x': {0: torch.export.Dim('batch', min=1, max=256)}} if dynamic_batch else None
    return torch.export.export(module, (example, ), dynamic_shapes=dynamic_shapes)

def export_onnx(module: nn.Module, example: Tensor, path: str, dynamic_batch: bool = True,
                opset: int = DEFAULT_OPSET) -> str:
    """ONNX export through the dynamo exporter (``torch.onnx.export(..., dynamo=True)``) at ``opset`` (one of
    :data:`ONNX_OPSETS`); returns ``path``."""
    if opset not in ONNX_OPSETS:
        raise ValueError(f'ONNX opset {opset} is not supported; choose from {", ".join(map(str, ONNX_OPSETS))}')
    dynamic_shapes = {'x': {0: torch.export.Dim('batch', min=1, max=256)}} if dynamic_batch else None
    program = torch.onnx.export(module, (example, ), dynamo=True, dynamic_shapes=dynamic_shapes,
                                input_names=['x'], verbose=False, opset_version=opset)
    with atomic_output_with_siblings(path) as tmp:  # its external weights file is named after the model file
        program.save(tmp)
    return path

def run_onnx(path: str, inputs: Tensor) -> list:
    """Run an ONNX file with onnxruntime on the CPU."""
    import onnxruntime
    session = onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])
    return [torch.from_numpy(out) for out in session.run(None, {session.get_inputs()[0].name: inputs.numpy()})]

def export_metadata(model: nn.Module, input_size: Sequence[int], include_preprocess: bool = True) -> dict:
    """What a runtime needs to know besides the graph: the input specification, the preprocessing (``preprocess``:
    mean, std, bgr_to_rgb; ``preprocess_in_graph``) and the model's layout (``dataset_meta``: keypoint names, skeleton,
    flip pairs, colours; classes, palette) when it has one."""
    height, width = input_size
    meta = dict(input=dict(shape=['batch', 3, height, width], dtype='float32',
                           layout='BGR pixels in [0, 255], NCHW' if include_preprocess else 'normalised RGB, NCHW'),
                preprocess=dict(zip(('mean', 'std', 'bgr_to_rgb'), preprocess_params(model))),
                preprocess_in_graph=include_preprocess)
    if getattr(model, 'dataset_meta', None):
        meta['dataset_meta'] = jsonable(model.dataset_meta)
    return meta


def output_spec(model: nn.Module, example: Tensor) -> dict:
    """How ``model(x, mode='tensor')`` returns its outputs (``structure``: tensor, tuple, list or dict; the dict's
    ``names``) and their shapes for ``example``, so that a runtime can hand the exported outputs to the head's
    decoding in the structure it expects."""
    with torch.no_grad():
        out = model(example, None, mode='tensor')
    structure = 'dict' if isinstance(out, dict) else type(out).__name__ if isinstance(out, (tuple, list)) else 'tensor'
    values = list(out.values()) if isinstance(out, dict) else list(out) if structure != 'tensor' else [out]
    names = list(out) if isinstance(out, dict) else [f'output_{i}' for i in range(len(values))]
    return dict(structure=structure, names=names, shapes=[['batch', *v.shape[1:]] for v in values])


def export_model(model: nn.Module,
                 input_size: Sequence[int],
                 out_prefix: str,
                 formats: Sequence[str] = ('pt2', 'onnx'),
                 include_preprocess: bool = True,
                 batch_size: int = 2,
                 tol: Optional[Tolerance] = None,
                 seed: int = 0,
                 opset: int = DEFAULT_OPSET) -> Tuple[Dict[str, str], dict]:
    """Export ``model`` (eval mode, CPU) to ``<out_prefix>.pt2`` / ``<out_prefix>.onnx`` (at ONNX ``opset``) and
    check parity.

    The parity input is a random image batch of ``batch_size`` x 3 x ``input_size`` (a different batch size than the
    example used for tracing, which checks the dynamic batch dimension).

    Returns:
        ``{format: path}``, and the metadata (:func:`export_metadata` plus the RoPE modes, ``outputs``
        (:func:`output_spec`) and the parity reports) that :func:`sapiens2.deploy.bundle.write_bundle` records.
    """
    unknown = set(formats) - {'pt2', 'onnx'}
    if unknown:
        raise ValueError(f'unknown export formats {sorted(unknown)}; choose from pt2, onnx')
    tol = tol or Tolerance()
    generator = torch.Generator().manual_seed(seed)
    height, width = input_size
    example = torch.rand(batch_size, 3, height, width, generator=generator) * 255
    check = torch.rand(batch_size + 1, 3, height, width, generator=generator) * 255
    model = model.eval()
    module = ExportableModel(model, include_preprocess).eval()
    paths, reports = {}, []
    meta = export_metadata(model, input_size, include_preprocess)
    meta['outputs'] = output_spec(model, torch.zeros(1, 3, height, width))
    with torch.no_grad():
        eager = module(check)
    if 'pt2' in formats:
        program = export_program(module, example)
        paths['pt2'] = out_prefix + '.pt2'
        with AtomicOutput(paths['pt2']) as out:
            torch.export.save(program, out.tmp)
        loaded = torch.export.load(paths['pt2'])
        with torch.no_grad():
            reports.append(check_parity('torch.export', eager, loaded.module()(check), Tolerance(1e-5, 1e-5)))
        meta['pt2_rope_dtype'] = str(rope_dtype(model))
    if 'onnx' in formats:
        paths['onnx'], report = _export_onnx_fp32_rope(module, example, check, eager, out_prefix + '.onnx', tol,
                                                       opset)
        reports.append(report)
        meta['onnx_rope_dtype'] = str(torch.float32)
        meta['onnx_opset'] = opset
    meta['parity'] = [asdict(r) for r in reports]
    return paths, meta


def _export_onnx_fp32_rope(module: nn.Module, example: Tensor, check: Tensor, eager: OutputT, path: str,
                           tol: Tolerance, opset: int) -> Tuple[str, ParityReport]:
    fp32 = copy.deepcopy(module)
    set_rope_dtype(fp32, torch.float32)
    with torch.no_grad():
        eager_fp32 = fp32(check)
        export_onnx(fp32, example, path, opset=opset)
    report = check_parity('onnxruntime (fp32 RoPE)', eager_fp32, run_onnx(path, check), tol)
    report.notes['max_abs_diff_vs_bf16_rope_eager'] = max(
        float((a - b).abs().max()) for a, b in zip(eager, eager_fp32))
    return path, report

def build_for_export(config: str, checkpoint: Optional[str],
                     trust_checkpoint: Optional[bool] = None) -> Tuple[nn.Module, Tuple[int, int]]:
    """A config's model on the CPU (fp32) and its input size (H, W); ``trust_checkpoint`` as in ``init_model``."""
    from sapiens2.apis.builder import init_model, model_input_size
    model = init_model(config, checkpoint, device='cpu', trust_checkpoint=trust_checkpoint)
    return model, model_input_size(model.cfg)
