"""``benchmarks/onnx_attention.py`` on a tiny layer: a row per kind and token count, every peer timed, and the
exported layers computing the torch layer's function (no timing is asserted)."""
import re

import pytest

from tests.scripts import load_script

pytest.importorskip('onnxruntime')
pytest.importorskip('onnxscript')


def test_a_row_per_kind_with_both_opsets_matching_torch(capsys):
    load_script('benchmarks/onnx_attention.py').main(['--arch', 'sapiens2_tiny', '--tokens', '48', '--repeats', '1'])
    out = capsys.readouterr().out
    assert '[torch.onnx]' not in out  # the exporter's progress stays off the table
    rows = re.findall(r'^(mha|gqa) +48 +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)x +([\d.]+)x +([\d.e+-]+)$', out, re.M)
    assert [row[0] for row in rows] == ['mha', 'gqa']
    for row in rows:
        assert all(float(t) > 0 for t in row[1:6]) and float(row[6]) < 1e-4
