"""The precision peers of ``benchmarks/backbone_vs_transformers.py`` (``--quick``): every peer's row and output
comparison is printed (no timing is asserted)."""
import re

import pytest

from tests.scripts import load_script

pytest.importorskip('onnxruntime')
pytest.importorskip('onnxscript')


@pytest.mark.slow
def test_quick_run_prints_a_row_per_precision(capsys, monkeypatch):
    bench = load_script('benchmarks/backbone_vs_transformers.py')
    monkeypatch.setattr(bench, 'cpu_runs_bf16', lambda: True)  # the bf16 row also where the CPU lacks native bf16
    bench.main(['--quick'])
    out = capsys.readouterr().out
    assert re.search(r'^part +peer +seconds +speed-up +GFLOP/s +% GEMM +output vs ours$', out, re.M)
    for peer in ('transformers', 'ours', 'ours-bf16', 'ort-fp32', 'ort-int8', 'ort-fp32-op18'):
        assert re.search(rf'^seg task +{peer} +\d+\.\d\d +\d+\.\d\dx ', out, re.M), peer
    for peer in ('ours-bf16', 'ort-fp32', 'ort-int8', 'ort-fp32-op18'):
        line = re.search(rf'^seg task +{peer} .*$', out, re.M).group()
        share = float(re.search(r'labels ([\d.]+) % same', line).group(1))
        assert share > 90, line  # the same function, in another precision
    assert re.search(r'^seg task: ort-fp32 at \d+\.\d\dx ours \(torch eager fp32\)$', out, re.M)
    assert re.search(r'^seg task: ort-fp32 \(opset 23, fused Attention\) at \d+\.\d\dx ort-fp32-op18$', out, re.M)
