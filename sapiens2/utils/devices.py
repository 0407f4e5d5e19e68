"""Which inference precision (``dtype``) runs on which device and backend: one table, and the checks that read it.

A device or dtype that cannot run is one clear error before any model is built (instead of torch's ``Found no
NVIDIA driver`` or ``Unexpected floating ScalarType`` from inside the forward). docs/inference.md shows the table.
torch is imported only when a device is resolved, so command lines can take the names without importing it.
"""
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

#: (backend, device type) -> the dtypes that run there. A new backend is a new row; the command line, the inferencer
#: and the docs read this table. onnxruntime runs exported bundles (int8: a bundle exported with its int8 model);
#: torch's int8 on the CPU is the backbone's linear layers in int8 (sapiens2.models.layers.int8_linear).
DTYPES_BY_BACKEND_DEVICE: Dict[Tuple[str, str], Tuple[str, ...]] = {
    ('torch', 'cpu'): ('fp32', 'bf16', 'int8'),
    ('torch', 'cuda'): ('fp32', 'fp16', 'bf16'),
    ('onnxruntime', 'cpu'): ('fp32', 'int8'),
    ('onnxruntime', 'cuda'): ('fp32', ),
}
#: Every dtype name of the table, in table order.
DTYPES: Tuple[str, ...] = tuple(dict.fromkeys(d for dtypes in DTYPES_BY_BACKEND_DEVICE.values() for d in dtypes))
#: Where the CPU's feature flags are read when torch's probes say no (:func:`cpu_runs_bf16`).
CPUINFO = '/proc/cpuinfo'
#: How to run int8 with the onnxruntime backend, which runs exported bundles only: the hint names both steps.
INT8_STEPS = ('export the model first (python tools/deploy/export.py CONFIG [CHECKPOINT] --out FOLDER --int8), then '
              'run the bundle: --model FOLDER --dtype int8 (the onnxruntime backend)')
#: CPU flags of int8 dot products without 16-bit intermediate sums (which saturate): torch's int8 runs per-token
#: int8 products there (``Int8Linear``, compiled).
INT8_DOT_FLAGS = ('avx512_vnni', 'avx_vnni', 'amx_int8')
#: Without them, torch's int8 runs on AVX2 with torch's dynamic int8 linear layers (fbgemm: activations in 7 bits, so
#: that the 16-bit sums cannot saturate), eager.
AVX2_FLAG = 'avx2'
#: The torch autocast dtype of each name (fp32 runs without autocast).
_AUTOCAST = dict(bf16='bfloat16', fp16='float16')
#: The dtype name that lets :func:`resolve_dtype` pick the fastest precision the device computes well.
AUTO = 'auto'
#: CPU flags that matter for inference speed, as /proc/cpuinfo names them (benchmarks print them).
SPEED_FLAGS = ('avx2', 'avx512f', 'avx512_vnni', 'avx512_bf16', 'amx_tile', 'amx_bf16', 'amx_int8')


class Int8Measurement(NamedTuple):
    """What torch's int8 (``--dtype int8``) was measured to cost and gain on one CPU class (docs/performance.md)."""
    #: The largest change of a shipped tiny model's validation metric against fp32, in % (the bound is 1 %).
    metric_change: float
    #: The 0.4b pose task at 1024x768: int8 against our fp32, median of interleaved repeats.
    speedup: float
    #: Where and when, for the notice line.
    source: str


#: Accuracy bound of a faster default: the tiny models' metrics within this % of fp32.
AUTO_METRIC_CHANGE = 1.0
#: int8 as measured, by CPU class (:func:`cpu_class`): ``auto`` picks int8 on a class only where it stayed within
#: :data:`AUTO_METRIC_CHANGE` and ran faster than the dtype ``auto`` would pick otherwise. Only eager int8 is a
#: candidate: the per-token int8 of VNNI and AMX CPUs compiles the blocks at the first call (seconds to a minute),
#: which the default of a single photo must not cost, and those CPUs compute bf16 natively anyway.
INT8_MEASURED: Dict[str, Int8Measurement] = {}


def device_types(backend: str = 'torch') -> Tuple[str, ...]:
    """The device types ``backend`` runs on (``('cpu', 'cuda')`` for torch)."""
    found = tuple(device for name, device in DTYPES_BY_BACKEND_DEVICE if name == backend)
    if not found:
        backends = sorted({name for name, _ in DTYPES_BY_BACKEND_DEVICE})
        raise ValueError(f'backend {backend!r} is not known; backends: {", ".join(backends)}')
    return found


def resolve_device(device: Optional[str] = None, backend: str = 'torch') -> str:
    """``device`` checked against the table and the machine (None: ``cuda`` when a GPU is available, else ``cpu``).

    Raises ``ValueError`` in one line for an unknown device (``tpu:3``), ``cuda`` without a usable GPU, or a GPU
    index the machine does not have.
    """
    import torch
    if device is None:
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    types = device_types(backend)
    match = re.fullmatch(r'([a-z]+)(?::(\d+))?', str(device).strip())
    if match is None or match.group(1) not in types:
        raise ValueError(f'device {device!r} is not one sapiens2 runs on with the {backend} backend; give '
                         + ', '.join(f'{t}' + (f' or {t}:N' if t != 'cpu' else '') for t in types))
    kind, index = match.group(1), match.group(2)
    if kind == 'cuda':
        if not torch.cuda.is_available():
            raise ValueError(f'device {device!r}: torch finds no usable CUDA GPU on this machine (no NVIDIA driver or '
                             'GPU, or a CPU-only torch build); run on the CPU with device cpu')
        count = torch.cuda.device_count()
        if index is not None and int(index) >= count:
            raise ValueError(f'device {device!r} does not exist: this machine has {count} CUDA GPU(s), cuda:0 to '
                             f'cuda:{count - 1}')
    return str(device).strip()


def check_dtype(dtype: str, device: str, backend: str = 'torch') -> None:
    """Raise ``ValueError`` in one line when ``dtype`` does not run on ``device`` (``cpu``, ``cuda:1``...) with
    ``backend``, naming where it does run (and the backend to choose where another one runs it on this device);
    bf16 on the CPU also needs the CPU to compute bf16 natively (:func:`cpu_runs_bf16`, probed at run time)."""
    device_type = str(device).split(':')[0]
    runs = DTYPES_BY_BACKEND_DEVICE.get((backend, device_type))
    if runs is None:
        device_types(backend)  # an unknown backend is named first
        raise ValueError(f'device {device!r} is not one sapiens2 runs on with the {backend} backend')
    if dtype in runs:
        if dtype == 'bf16' and device_type == 'cpu':
            _check_cpu_bf16()
        if dtype == 'int8' and device_type == 'cpu' and backend == 'torch':
            _check_cpu_int8()
        return
    where = [f'{d} ({b})' for (b, d), dtypes in DTYPES_BY_BACKEND_DEVICE.items() if dtype in dtypes]
    if not where:
        raise ValueError(f'dtype {dtype!r} is not known; dtypes: {", ".join(DTYPES)}')
    here = [b for (b, d), dtypes in DTYPES_BY_BACKEND_DEVICE.items() if d == device_type and dtype in dtypes]
    hint = f'; on the {device_type} give --backend {here[0]} --dtype {dtype}' if here else ''
    raise ValueError(f'dtype {dtype} does not run on the {device_type} with the {backend} backend, which runs '
                     f'{", ".join(runs)}; {dtype} runs on {", ".join(where)}{hint} (docs/inference.md: devices and '
                     'dtypes)')


def cpu_runs_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX, or the ``bf16`` flag of an Arm CPU); without it
    torch emulates bf16, slower than fp32."""
    return cpu_bf16_feature() is not None


def torch_uses_amx() -> bool:
    """Whether torch computes on this CPU's AMX tiles (its probe: the CPU has them and the OS lets it use them)."""
    import torch
    probe = getattr(torch.cpu, '_is_amx_tile_supported', None)
    return bool(probe is not None and probe())


def cpu_bf16_feature() -> Optional[str]:
    """The CPU feature that computes bf16 natively (``amx`` first: its tiles are the faster, then ``avx512_bf16``,
    ``bf16`` on Arm), None without one."""
    import torch
    if torch_uses_amx():
        return 'amx'
    probe = getattr(torch.cpu, '_is_avx512_bf16_supported', None)
    if probe is not None and probe():
        return 'avx512_bf16'
    flags = cpu_flags()
    return next((flag for flag in ('amx_bf16', 'avx512_bf16', 'bf16') if flag in flags), None)


def cpu_flags() -> Tuple[str, ...]:
    """The feature flags of the first CPU in :data:`CPUINFO` (empty where it cannot be read)."""
    return tuple(_cpuinfo_field(('flags', 'Features')).split())


def cpu_model_name() -> str:
    """The CPU's model name from :data:`CPUINFO`, else :func:`platform.processor` (``unknown`` without either)."""
    import platform
    return _cpuinfo_field(('model name', 'Model', 'Hardware')) or platform.processor() or 'unknown'


def cpu_class() -> str:
    """The CPU class of the speed tables (docs/performance.md): ``amx``, ``avx512_bf16``, ``vnni`` (int8 dot products
    without native bf16), ``avx2`` (none of those: AVX2 only) or ``other``."""
    flags = set(cpu_flags())
    feature = cpu_bf16_feature()
    if feature == 'amx':
        return 'amx'
    if feature:
        return 'avx512_bf16'
    if flags & set(INT8_DOT_FLAGS):
        return 'vnni'
    return 'avx2' if AVX2_FLAG in flags else 'other'


def int8_kernel() -> Optional[str]:
    """How torch's int8 runs on this CPU: ``'int_mm'`` (per-token int8 products, ``torch._int_mm``, compiled) with
    int8 dot products, ``'fbgemm'`` (torch's dynamic int8 linear layers, eager) on AVX2 without them where torch has
    the fbgemm engine, None where neither runs (:func:`check_dtype` refuses int8 there)."""
    flags = set(cpu_flags())
    if flags & set(INT8_DOT_FLAGS):
        return 'int_mm'
    if AVX2_FLAG in flags and torch_has_fbgemm():
        return 'fbgemm'
    return None


def torch_has_fbgemm() -> bool:
    """Whether this torch build has the fbgemm quantization engine (x86-64 builds do)."""
    import torch
    return bool({'fbgemm', 'x86'} & set(torch.backends.quantized.supported_engines))


def cpu_summary() -> str:
    """One line for a benchmark's header: the CPU's model and which of :data:`SPEED_FLAGS` it has."""
    flags = set(cpu_flags())
    has = [flag for flag in SPEED_FLAGS if flag in flags]
    return f'{cpu_model_name()}; flags: {" ".join(has) or "none of " + " ".join(SPEED_FLAGS)}'


def _cpuinfo_field(names: Sequence[str]) -> str:
    try:
        with open(CPUINFO) as f:
            lines = f.read().splitlines()
    except OSError:
        return ''
    for line in lines:
        key, sep, value = line.partition(':')
        if sep and key.strip() in names:
            return value.strip()
    return ''


def _check_cpu_bf16() -> None:
    if not cpu_runs_bf16():
        raise ValueError('dtype bf16 on the cpu needs a CPU with AVX512-BF16 or AMX, which this one lacks (torch '
                         'would emulate bf16, slower than fp32); run --dtype fp32, or int8: --dtype int8 on a CPU with '
                         f'AVX2 or VNNI, else {INT8_STEPS} (docs/inference.md: devices and dtypes)')


def _check_cpu_int8() -> None:
    if int8_kernel() is None:
        raise ValueError('dtype int8 with the torch backend needs a CPU with AVX2 (and a torch with the fbgemm '
                         f'engine) or with int8 dot products ({", ".join(INT8_DOT_FLAGS)}), which this one lacks; run '
                         f'--dtype fp32, or int8 with ONNX Runtime: {INT8_STEPS} (docs/inference.md: devices and '
                         'dtypes)')


def autocast_dtype(dtype: str):
    """The torch dtype to autocast the forward to for ``dtype`` (None for fp32; for int8, what is not int8 runs in
    bf16 on a CPU that computes it natively, else in fp32)."""
    import torch
    if dtype == 'int8':
        return torch.bfloat16 if cpu_runs_bf16() else None
    return getattr(torch, _AUTOCAST[dtype]) if dtype in _AUTOCAST else None


def resolve_dtype(dtype: str, device: str, backend: str = 'torch',
                  precisions: Optional[Sequence[str]] = None) -> Tuple[str, str]:
    """(dtype, why): for ``'auto'`` the dtype :func:`auto_dtype` picks (``precisions``: those an exported bundle has
    a model for) and why; any other dtype checked (:func:`check_dtype`), with an empty why."""
    if dtype == AUTO:
        return auto_dtype(device, backend, precisions)
    check_dtype(dtype, device, backend)
    return dtype, ''


def auto_dtype(device: str, backend: str = 'torch', precisions: Optional[Sequence[str]] = None) -> Tuple[str, str]:
    """The dtype ``auto`` runs on ``device`` with ``backend``, and why (docs/inference.md: devices and dtypes).

    torch: bf16 on a CPU that computes bf16 natively (AVX512-BF16 or AMX) and on a CUDA GPU that does (compute
    capability 8.0 on); on another CPU int8 where :data:`INT8_MEASURED` says it stays within the accuracy bound and
    pays on that CPU class (AVX2); fp32 elsewhere (an older GPU too: fp16 can overflow where the bf16-trained models
    do not, so it is only run when asked for). onnxruntime: int8 where the table runs it and the bundle has an int8
    model (``precisions``), else fp32. As the default of inference, ``auto`` must stay within the accuracy the docs
    state for each precision (docs/performance.md: precisions on the CPU).
    """
    device_type = str(device).split(':')[0]
    runs = DTYPES_BY_BACKEND_DEVICE.get((backend, device_type), ())
    if not runs:
        check_dtype('fp32', device, backend)  # one line naming the unknown backend or device
    if backend == 'torch' and device_type == 'cpu':
        feature = cpu_bf16_feature()
        if feature and 'bf16' in runs:
            return 'bf16', f'the CPU computes bf16 natively: {feature}'
        return _cpu_int8_or_fp32(runs)
    if backend == 'torch' and device_type == 'cuda':
        import torch
        index = int(str(device).split(':')[1]) if ':' in str(device) else None
        name, (major, _) = torch.cuda.get_device_name(index), torch.cuda.get_device_capability(index)
        if major >= 8 and 'bf16' in runs:  # Ampere and later compute bf16 natively
            return 'bf16', f'{name} computes bf16 natively (compute capability {major}.x)'
        return 'fp32', (f'{name} lacks native bf16 (compute capability {major}.x, bf16 needs 8.0); --dtype fp16 runs '
                        'half precision there')
    if 'int8' in runs and 'int8' in (precisions or ()):
        return 'int8', 'the bundle has an int8 model'
    why = ('the bundle has no int8 model (export it with --int8)' if 'int8' in runs else
           f'{backend} runs {", ".join(runs)} on the {device_type}')
    return 'fp32', why


def _cpu_int8_or_fp32(runs: Sequence[str]) -> Tuple[str, str]:
    """``auto`` on a CPU without native bf16: int8 where :data:`INT8_MEASURED` says it holds on this CPU class and
    it runs eager here, else fp32."""
    no_bf16 = 'the CPU has no native bf16 (AVX512-BF16 or AMX)'
    kind = cpu_class()
    measured = INT8_MEASURED.get(kind)
    if measured is None or 'int8' not in runs or int8_kernel() != 'fbgemm':
        return 'fp32', f'{no_bf16}; int8 is not measured to pay on this CPU class ({kind})'
    if measured.metric_change > AUTO_METRIC_CHANGE or measured.speedup <= 1.0:
        return 'fp32', (f'{no_bf16}; int8 on {kind} was measured at {measured.metric_change:.2f} % of fp32\'s '
                        f'tiny-model metrics and {measured.speedup:.2f}x its speed ({measured.source}), not within '
                        f'{AUTO_METRIC_CHANGE:g} % and faster')
    return 'int8', (f'{no_bf16}; {kind}: int8 linear layers measured within {measured.metric_change:.2f} % of fp32 on '
                    f'the tiny models, {measured.speedup:.2f}x fp32 on the 0.4b ({measured.source}); --dtype fp32 for '
                    'the official numerics')


class DtypeNotice(UserWarning):
    """What ``--dtype auto`` picked; a command prints it as one ``<prog>: notice: dtype auto -> ...`` line."""


def auto_dtype_line(choices: List[Tuple[str, str, str]]) -> str:
    """One line saying what ``auto`` picked: ``choices`` holds (model, dtype, why) per model; models that got the
    same dtype for the same reason share one clause."""
    groups: Dict[Tuple[str, str], List[str]] = {}
    for model, dtype, why in choices:
        groups.setdefault((dtype, why), []).append(model)
    if len(groups) == 1:
        (dtype, why), = groups
        return f'dtype auto -> {dtype} ({why})'
    return 'dtype auto -> ' + '; '.join(f'{dtype} for {", ".join(models)} ({why})'
                                        for (dtype, why), models in groups.items())

