"""Which inference precision (``dtype``) runs on which device and backend: one table, and the checks that read it.

A device or dtype that cannot run is one clear error before any model is built (instead of torch's ``Found no
NVIDIA driver`` or ``Unexpected floating ScalarType`` from inside the forward). docs/inference.md shows the table.
torch is imported only when a device is resolved, so command lines can take the names without importing it.
"""
import re
from typing import Dict, Optional, Tuple

#: (backend, device type) -> the dtypes that run there. A new backend is a new row; the command line, the inferencer
#: and the docs read this table. onnxruntime runs exported bundles (int8: a bundle exported with its int8 model).
DTYPES_BY_BACKEND_DEVICE: Dict[Tuple[str, str], Tuple[str, ...]] = {
    ('torch', 'cpu'): ('fp32', 'bf16'),
    ('torch', 'cuda'): ('fp32', 'fp16', 'bf16'),
    ('onnxruntime', 'cpu'): ('fp32', 'int8'),
    ('onnxruntime', 'cuda'): ('fp32', ),
}
#: Every dtype name of the table, in table order.
DTYPES: Tuple[str, ...] = tuple(dict.fromkeys(d for dtypes in DTYPES_BY_BACKEND_DEVICE.values() for d in dtypes))
#: Where the CPU's feature flags are read when torch's probes say no (:func:`cpu_runs_bf16`).
CPUINFO = '/proc/cpuinfo'
#: How to run int8: the onnxruntime backend runs exported bundles only, so the hint names both steps.
INT8_STEPS = ('export the model first (python tools/deploy/export.py CONFIG [CHECKPOINT] --out FOLDER --int8), then '
              'run the bundle: --model FOLDER --dtype int8 (the onnxruntime backend)')
#: The torch autocast dtype of each name (fp32 runs without autocast).
_AUTOCAST = dict(bf16='bfloat16', fp16='float16')


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
        return
    where = [f'{d} ({b})' for (b, d), dtypes in DTYPES_BY_BACKEND_DEVICE.items() if dtype in dtypes]
    if not where:
        raise ValueError(f'dtype {dtype!r} is not known; dtypes: {", ".join(DTYPES)}')
    here = [b for (b, d), dtypes in DTYPES_BY_BACKEND_DEVICE.items() if d == device_type and dtype in dtypes]
    if dtype == 'int8' and here == ['onnxruntime']:
        hint = f'; on the {device_type}, int8 runs an exported bundle: {INT8_STEPS}'
    else:
        hint = f'; on the {device_type} give --backend {here[0]} --dtype {dtype}' if here else ''
    raise ValueError(f'dtype {dtype} does not run on the {device_type} with the {backend} backend, which runs '
                     f'{", ".join(runs)}; {dtype} runs on {", ".join(where)}{hint} (docs/inference.md: devices and '
                     'dtypes)')


def cpu_runs_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX, or the ``bf16`` flag of an Arm CPU); without it
    torch emulates bf16, slower than fp32."""
    import torch
    probes = [getattr(torch.cpu, name, None) for name in ('_is_avx512_bf16_supported', '_is_amx_tile_supported')]
    if any(probe is not None and probe() for probe in probes):
        return True
    try:
        with open(CPUINFO) as f:
            flags = set(f.read().split())
    except OSError:
        return False
    return bool(flags & {'avx512_bf16', 'amx_bf16', 'bf16'})


def _check_cpu_bf16() -> None:
    if not cpu_runs_bf16():
        raise ValueError('dtype bf16 on the cpu needs a CPU with AVX512-BF16 or AMX, which this one lacks (torch '
                         f'would emulate bf16, slower than fp32); run fp32, or int8: {INT8_STEPS} (docs/inference.md: '
                         'devices and dtypes)')


def autocast_dtype(dtype: str):
    """The torch dtype to autocast the forward to for ``dtype`` (None for fp32)."""
    import torch
    return getattr(torch, _AUTOCAST[dtype]) if dtype in _AUTOCAST else None
