"""The dense GEMM rate each CPU library reaches on the 0.4b backbone's largest shape, side by side in one process.

    OMP_NUM_THREADS=2 python benchmarks/gemm_rates.py            # 3072 tokens x 1024 -> 8192 (SwiGLU w12 at 1024x768)
    python benchmarks/gemm_rates.py --shape 768 1024 8192 --repeats 7

Issue 41 asked whether torch's fp32 path leaves the CPU unused where ONNX Runtime does not: this times the same
matrix product through torch's default (``F.linear``: MKL's sgemm), oneDNN (torch's ``mkldnn`` linear with a
pre-packed weight), ONNX Runtime's own kernels (a one-node ``MatMul`` graph) and torch bf16, interleaved, and prints
GFLOP/s and ratios to torch fp32; on a CPU with int8 dot products also the int8 products (``torch._int_mm`` and
oneDNN's ``qlinear``, which takes AMX) and the per-token quantization of the input that each int8 linear layer
needs first (compiled, as ``--dtype int8`` runs it). MKL picks its code path by CPU vendor; running it with
``LD_PRELOAD`` of a library whose ``mkl_serv_intel_cpu_true`` returns 1 shows what its Intel path would give
(docs/performance.md).
"""
import argparse
import os
import statistics
import time
from typing import Callable, Dict, List

import numpy as np
import torch
import torch.nn.functional as F

from sapiens2.models.layers.int8_linear import quantize_rows
from sapiens2.utils.devices import INT8_DOT_FLAGS, SPEED_FLAGS, cpu_flags


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def onnxruntime_matmul(weight: np.ndarray, rows: int, threads: int) -> Callable[[np.ndarray], object]:
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    inner, outer = weight.shape
    graph = helper.make_graph([helper.make_node('MatMul', ['x', 'w'], ['y'])], 'gemm',
                              [helper.make_tensor_value_info('x', TensorProto.FLOAT, [rows, inner])],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, [rows, outer])],
                              [numpy_helper.from_array(weight, 'w')])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
    session = ort.InferenceSession(model.SerializeToString(), options, providers=['CPUExecutionProvider'])
    return lambda x: session.run(None, {'x': x})


def peers(rows: int, inner: int, outer: int, threads: int) -> Dict[str, Callable[[], object]]:
    x, weight, bias = torch.randn(rows, inner), torch.randn(outer, inner), torch.zeros(outer)
    packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
    x_np, weight_np = x.numpy(), weight.t().contiguous().numpy()
    ort_run = onnxruntime_matmul(weight_np, rows, threads)
    xb, wb, bb = x.bfloat16(), weight.bfloat16(), bias.bfloat16()
    return {
        'torch fp32 (MKL)': lambda: F.linear(x, weight, bias),
        'torch fp32 (oneDNN, packed)': lambda: torch.ops.mkldnn._linear_pointwise(x, packed, bias, 'none', [], ''),
        'onnxruntime fp32': lambda: ort_run(x_np),
        'torch bf16 (oneDNN)': lambda: F.linear(xb, wb, bb),
    }


def int8_peers(x: torch.Tensor, weight: torch.Tensor) -> Dict[str, Callable[[], object]]:
    """The int8 x int8 products of ``x`` (rows, inner) and ``weight`` (outer, inner), both quantized beforehand (the
    sums without the activations' scales), and the quantization of ``x``."""
    outer = weight.shape[0]
    values, _ = quantize_rows(x)  # (rows, inner) int8, per-token scales
    weight, weight_scale = quantize_rows(weight)
    weight_t, packed = weight.t().contiguous(), torch.ops.onednn.qlinear_prepack(weight, None)
    unsigned = (values.to(torch.int16) + 128).to(torch.uint8)  # oneDNN's int8 inputs: u8 with zero point 128
    scales, zero_points = weight_scale.flatten(), torch.zeros(outer, dtype=torch.int64)
    quantize = torch.compile(quantize_rows)
    return {
        'torch int8 (_int_mm)': lambda: torch._int_mm(values, weight_t),
        'torch int8 (oneDNN qlinear)': lambda: torch.ops.onednn.qlinear_pointwise(
            unsigned, 1.0, 128, packed, scales, zero_points, None, 1.0, 0, torch.bfloat16, 'none', [], ''),
        'int8: quantizing the input': lambda: quantize(x),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--shape', type=int, nargs=3, default=(3072, 1024, 8192), metavar=('ROWS', 'INNER', 'OUTER'))
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args()
    threads = torch.get_num_threads()
    flags = set(cpu_flags())
    print(f'CPU flags: {" ".join(f for f in SPEED_FLAGS if f in flags) or "none of " + str(SPEED_FLAGS)}; '
          f'{threads} threads; LD_PRELOAD={os.environ.get("LD_PRELOAD", "")!r}; '
          f'load average {os.getloadavg()[0]:.1f}')
    runs = peers(*args.shape, threads)
    if flags & set(INT8_DOT_FLAGS):  # without them int8 products can saturate (int8_linear)
        rows, inner, outer = args.shape
        runs.update(int8_peers(torch.randn(rows, inner).bfloat16(), torch.randn(outer, inner)))
    flops = 2 * args.shape[0] * args.shape[1] * args.shape[2]
    seconds: Dict[str, List[float]] = {name: [] for name in runs}
    for run in runs.values():
        run()  # warm-up: packing, first-touch of the output
    for _ in range(args.repeats):
        for name, run in runs.items():  # interleaved: a slow spell of the machine hits every peer alike
            seconds[name].append(timed(run))
    base = flops / statistics.median(seconds['torch fp32 (MKL)'])
    print(f'GEMM {args.shape[0]}x{args.shape[1]}x{args.shape[2]}, median of {args.repeats}:')
    for name, values in seconds.items():
        rate = flops / statistics.median(values)
        print(f'  {name:28s} {rate / 1e9:7.0f} GFLOP/s  {rate / base:5.2f}x torch fp32  '
              f'{statistics.median(values) * 1e3:6.1f} ms')


if __name__ == '__main__':
    main()
