"""One attention layer of a Sapiens2 backbone in ONNX Runtime: the fused opset-23 ``Attention`` node of our exports
next to the opset-18 graph (MatMul-Softmax-MatMul) and torch eager, in one process, interleaved.

    OMP_NUM_THREADS=2 python benchmarks/onnx_attention.py                  # 0.4b widths; 768, 3072 and 12288 tokens
    python benchmarks/onnx_attention.py --arch sapiens2_1b --tokens 3072 --repeats 5

The layer is ``sapiens2.models.layers.attention.Attention`` (q/k/v projections, QK-norm, SDPA, output projection)
with the arch's width and heads, fp32, batch 1: full multi-head attention (``mha``, the blocks near either end) and
grouped-query attention with half the kv heads (``gqa``, the middle blocks). It is exported by
``sapiens2.deploy.export.export_onnx`` at opsets 18 and 23 and run by ONNX Runtime's CPU provider with torch's thread
count (3072 tokens: a 1024x768 input with 16-pixel patches). Prints per row the median seconds of each peer, the
speed-up of opset 23 over opset 18 and over torch (medians of per-repeat ratios) and the largest output difference.
"""
import argparse
import contextlib
import io
import os
import os.path as osp
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))

from sapiens2.apis.backends.onnxruntime_session import OnnxRuntimeSession  # noqa: E402
from sapiens2.deploy.export import export_onnx  # noqa: E402
from sapiens2.models.backbones.sapiens2 import resolve_arch  # noqa: E402
from sapiens2.models.layers.attention import Attention  # noqa: E402

PEERS = ('torch', 'ort-op18', 'ort-op23')


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(layer: Attention, tokens: int, repeats: int, folder: str) -> dict:
    """{peer: [seconds per repeat]} and the largest |ONNX - torch| of one layer over ``tokens`` tokens."""
    x = torch.randn(1, tokens, layer.wq.in_features)
    with torch.no_grad():
        expected = layer(x)
        runs = {'torch': lambda: layer(x)}
        diff = 0.0
        for opset in (18, 23):
            with contextlib.redirect_stdout(io.StringIO()):  # the exporter's progress lines
                path = export_onnx(layer, x, osp.join(folder, f'{opset}.onnx'), False, opset)
            session = OnnxRuntimeSession(path)
            diff = max(diff, float((session(x)[0] - expected).abs().max()))
            runs[f'ort-op{opset}'] = lambda session=session: session(x)
        times = {peer: [] for peer in PEERS}
        for repeat in range(repeats + 1):  # round 0 warms up
            for peer in PEERS:
                took = seconds(runs[peer])
                if repeat:
                    times[peer].append(took)
    return dict(times=times, diff=diff)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--arch', default='sapiens2_0.4b')
    parser.add_argument('--tokens', type=int, nargs='+', default=[768, 3072, 12288])
    parser.add_argument('--repeats', type=int, default=3)
    args = parser.parse_args(argv)
    arch = resolve_arch(args.arch)
    width, heads = arch['embed_dims'], arch['num_heads']
    print(f'{args.arch} attention layer ({width} dims, {heads} heads), fp32, batch 1, {torch.get_num_threads()} '
          f'threads, median of {args.repeats} interleaved repeats, load average {os.getloadavg()[0]:.1f}')
    print(f'{"kind":4s} {"tokens":>6s} ' + ' '.join(f'{p + " s":>11s}' for p in PEERS)
          + f' {"op23/op18":>9s} {"op23/torch":>10s}  max |onnx - torch|')
    torch.manual_seed(0)
    for kind, kv_heads in (('mha', heads), ('gqa', heads // 2)):
        layer = Attention(width, heads, kv_heads).eval()
        for tokens in args.tokens:
            with tempfile.TemporaryDirectory(prefix='bench-attention-') as folder:
                result = measure(layer, tokens, args.repeats, folder)
            t = result['times']
            medians = ' '.join(f'{statistics.median(t[p]):11.4f}' for p in PEERS)
            over18 = statistics.median(a / b for a, b in zip(t['ort-op18'], t['ort-op23']))
            over_torch = statistics.median(a / b for a, b in zip(t['torch'], t['ort-op23']))
            print(f'{kind:4s} {tokens:6d} {medians} {over18:8.2f}x {over_torch:9.2f}x  {result["diff"]:.1e}',
                  flush=True)


if __name__ == '__main__':
    main()
