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
    assert re.search(r'^CPU: .+; flags: ', out, re.M)
    assert re.search(r'^part +peer +seconds +spread +speed-up +range +vs best +GFLOP/s +% GEMM +output vs ours$', out,
                     re.M)
    assert re.search(r'^our default \(--dtype auto\) here: (bf16|int8|fp32) \(.+\): peer ours', out, re.M)
    for peer in ('transformers', 'transformers-bf16', 'transformers-bf16w', 'ours', 'ours-bf16', 'ort-fp32', 'ort-int8',
                 'ort-fp32-op18'):
        assert re.search(rf'^seg task +{peer}\*? +\d+\.\d\d +\d+% +\d+\.\d\dx +[\d.-]+x +\d+\.\d\dx ', out, re.M), peer
    assert re.search(r'^ +vs best: against transformers(-bf16w?)?, transformers\' fastest peer', out, re.M)
    for peer in ('transformers-bf16', 'transformers-bf16w', 'ours-bf16', 'ort-fp32', 'ort-int8', 'ort-fp32-op18'):
        line = re.search(rf'^seg task +{peer}\*? .*$', out, re.M).group()
        share = float(re.search(r'labels ([\d.]+) % same', line).group(1))
        assert share > 90, line  # the same function, in another precision
    assert re.search(r'^seg task: ort-fp32 at \d+\.\d\dx ours \(torch eager fp32\)$', out, re.M)
    assert re.search(r'^seg task: ort-fp32 \(opset 23, fused Attention\) at \d+\.\d\dx ort-fp32-op18$', out, re.M)


def test_the_fair_peers_command_line_and_the_bf16_skip(capsys, monkeypatch):
    """The bf16 peers are left out (one line) on a CPU without native bf16; ``vs best`` falls back to transformers'
    fp32 when no other peer of theirs is close enough to ours."""
    bench = load_script('benchmarks/backbone_vs_transformers.py')
    monkeypatch.setattr(bench, 'cpu_runs_bf16', lambda: False)
    bench.main(['--arch', 'sapiens2_nano', '--size', '64', '48', '--repeats', '1', '--tasks', 'backbone', '--peers',
                'transformers', 'transformers-bf16', 'ours', 'ours-bf16'])
    out = capsys.readouterr().out
    assert 'transformers-bf16 and ours-bf16 skipped: this CPU has neither AVX512-BF16 nor AMX' in out
    assert not re.search(r'^backbone +(transformers|ours)-bf16 ', out, re.M)
    assert re.search(r'^ +vs best: against transformers, ', out, re.M)


def test_vs_best_leaves_out_a_peer_far_from_ours(capsys, monkeypatch):
    bench = load_script('benchmarks/backbone_vs_transformers.py')
    monkeypatch.setattr(bench, 'cpu_runs_bf16', lambda: True)
    monkeypatch.setattr(bench, 'CORRECT_REL_L2', 0.0)  # no bf16 output is that close: only fp32 is a fair peer
    bench.main(['--arch', 'sapiens2_nano', '--size', '64', '48', '--repeats', '1', '--tasks', 'backbone', '--peers',
                'transformers', 'transformers-bf16', 'ours'])
    out = capsys.readouterr().out
    assert re.search(r'^backbone +transformers-bf16 +\d+\.\d\d ', out, re.M)
    assert re.search(r'^ +vs best: against transformers, ', out, re.M)
    assert re.search(r'^backbone +transformers +\d+\.\d\d +\d+% +1\.00x +1\.00-1\.00x +1\.00x ', out, re.M)


def test_transformers_with_bf16_weights_is_a_peer(capsys, monkeypatch):
    """``transformers-bf16w``: transformers' model and input in bf16 (``torch_dtype=torch.bfloat16``), near ours."""
    bench = load_script('benchmarks/backbone_vs_transformers.py')
    monkeypatch.setattr(bench, 'cpu_runs_bf16', lambda: True)
    bench.main(['--arch', 'sapiens2_nano', '--size', '64', '48', '--repeats', '1', '--tasks', 'backbone', '--peers',
                'transformers', 'transformers-bf16w', 'ours'])
    out = capsys.readouterr().out
    line = re.search(r'^backbone +transformers-bf16w +\d+\.\d\d .*$', out, re.M).group()
    assert float(re.search(r'rel L2 ([\d.e+-]+)', line).group(1)) < bench.CORRECT_REL_L2, line
