"""int8 ONNX models for the CPU: ONNX Runtime's dynamic quantization of an exported fp32 model.

The weights of the matrix products (``MatMul``/``Gemm``: every linear layer of the backbone) are stored as 8-bit
integers with one scale per tensor; activations are quantized to uint8 per batch at run time.
Convolutions, attention's two batched products, RMSNorm and the rest stay in fp32 (docs/performance.md: precision
measures what this costs in accuracy and what it gains in speed). :func:`add_int8` adds the int8 model to an exported
bundle folder (``tools/deploy/export.py``) and records it in the bundle's manifest.
"""
import json
import logging
import os
import os.path as osp
from typing import Sequence

from sapiens2.apis.backends.bundle import INT8_FILE, MANIFEST
from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import atomic_output_with_siblings, atomic_write_bytes

#: Weight types of ``onnxruntime.quantization.QuantType`` by name.
WEIGHT_TYPES = ('qint8', 'quint8')
#: ONNX's protobuf limit: a model whose weights exceed it keeps them in an external data file.
_PROTOBUF_LIMIT = 2 ** 31


def quantize_onnx(src: str, dst: str, weight_type: str = 'quint8', op_types: Sequence[str] = ('MatMul', 'Gemm'),
                  per_channel: bool = False, overwrite: bool = False) -> None:
    """Write the dynamic int8 quantization of the fp32 ONNX model ``src`` to ``dst``.

    Args:
        weight_type: ``'quint8'`` (the default) or ``'qint8'``. Activations are uint8 either way; signed weights
            saturate the 16-bit sums of CPUs without AVX512-VNNI (a 1024->4096->1024 MLP over 3072 tokens on an
            AVX2 CPU: relative error 7.2 % with qint8, 1.7 % with quint8, at 2.0x and 1.85x the fp32 speed).
        op_types: the ONNX ops whose weights are quantized.
        per_channel: one scale per output channel instead of per tensor.
        overwrite: replace an existing ``dst`` (refused otherwise: ``FileExistsError``).

    The model is written beside ``dst`` under a temporary name and moved into place when complete, so ``dst`` is
    never a partial file. Weights beyond ONNX's 2 GiB protobuf limit go to ``<dst name>.data`` beside it.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic
    if weight_type not in WEIGHT_TYPES:
        raise ValueError(f'weight_type {weight_type!r} is not one of {", ".join(WEIGHT_TYPES)}')
    if not osp.isfile(src):
        raise FileNotFoundError(f'{src}: no such ONNX file to quantize')
    if osp.exists(dst) and not overwrite:
        raise FileExistsError(f'{dst} exists; give overwrite=True (export.py: --overwrite) to replace it')
    level = logging.getLogger().level
    with atomic_output_with_siblings(dst) as out:
        logging.getLogger().setLevel(max(level, logging.ERROR))  # its advice to pre-process is not needed here
        try:
            quantize_dynamic(src, out, op_types_to_quantize=list(op_types), per_channel=per_channel,
                             weight_type=QuantType.QInt8 if weight_type == 'qint8' else QuantType.QUInt8,
                             use_external_data_format=_onnx_bytes(src) // 4 >= _PROTOBUF_LIMIT * 0.9)
        finally:
            logging.getLogger().setLevel(level)


def add_int8(bundle_dir: str, overwrite: bool = False, **options) -> str:
    """Quantize a bundle's fp32 model into ``model.int8.onnx`` beside it and record it as ``onnx.int8`` in the
    bundle's manifest; returns the int8 model's path. ``options`` go to :func:`quantize_onnx`.

    An existing int8 file is refused unless ``overwrite``; the manifest is rewritten atomically.
    """
    manifest_path = osp.join(bundle_dir, MANIFEST)
    if not osp.isfile(manifest_path):
        raise FileNotFoundError(f'{bundle_dir}: no {MANIFEST}; export a bundle first (tools/deploy/export.py --out)')
    with open(manifest_path) as f:
        manifest = json.load(f)
    fp32 = manifest.get('onnx', {}).get('fp32')
    if not fp32:
        raise ValueError(f'{manifest_path}: no "onnx": {{"fp32": ...}} entry to quantize')
    dst = osp.join(bundle_dir, INT8_FILE)
    if osp.exists(dst) and not overwrite:
        raise FileExistsError(f'{dst} exists; give overwrite=True (export.py: --overwrite) to replace it')
    quantize_onnx(osp.join(bundle_dir, fp32), dst, overwrite=overwrite, **options)
    manifest['onnx']['int8'] = INT8_FILE
    atomic_write_bytes(manifest_path, (strict_json.dumps(manifest, indent=2) + '\n').encode())
    return dst


def _onnx_bytes(path: str) -> int:
    """Bytes of an ONNX model and of the ``.data`` files of its folder (its external data: an upper bound)."""
    folder = osp.dirname(osp.abspath(path))
    data = [osp.join(folder, n) for n in os.listdir(folder) if n.endswith('.data') or n == osp.basename(path)]
    return sum(osp.getsize(p) for p in data if osp.isfile(p))
