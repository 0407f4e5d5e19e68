"""``benchmarks/backbone_vs_transformers.py`` runs any combination of ``--tasks`` and ``--peers`` (issue 60: the
backbone alone with ONNX Runtime peers ended in ``StatisticsError``), prints a row per peer with its spread, and
reports a peer this CPU or install cannot run as skipped, with the reason, instead of failing. No timing is asserted."""
import re

import pytest

from tests.scripts import load_script

pytest.importorskip('onnxruntime')
pytest.importorskip('onnxscript')

NANO = ['--arch', 'sapiens2_nano', '--size', '64', '48', '--repeats', '1']
ROW = r'^{part} +{peer}\*? +\d+\.\d\d +\d+% +\d+\.\d\dx +\d+\.\d\d-\d+\.\d\dx +\d+\.\d\dx '


@pytest.fixture
def bench(monkeypatch):
    """The script with every peer runnable (native bf16 and int8 pretended) and compiling replaced by eager runs
    (compiling takes a test's time; tests/models/layers/test_compiled_block.py covers it)."""
    from sapiens2.models import Sapiens2
    module = load_script('benchmarks/backbone_vs_transformers.py')
    monkeypatch.setattr(module, 'cpu_runs_bf16', lambda: True)
    monkeypatch.setattr(module, 'CompiledBlockRunner', lambda: None)
    monkeypatch.setattr(Sapiens2, 'compile_blocks', lambda self: None)
    return module


def rows(out: str, part: str) -> list:
    return re.findall(ROW.format(part=part, peer=r'(\S+?)'), out, re.M)


@pytest.mark.slow
@pytest.mark.parametrize('tasks', [['backbone'], ['pose'], ['seg', 'backbone']])
def test_every_peer_on_any_tasks(bench, capsys, tasks):
    bench.main([*NANO, '--tasks', *tasks, '--peers', 'all'])
    out = capsys.readouterr().out
    assert re.search(r'^part +peer +seconds +spread +speed-up +range +vs best ', out, re.M)
    torch_peers = [p for p in bench.ALL_PEERS if p not in bench.ORT_PEERS]
    assert rows(out, 'backbone') == torch_peers + (list(bench.ORT_PEERS) if 'backbone' in tasks else [])
    for task in (t for t in tasks if t != 'backbone'):
        assert rows(out, f'{task} task') == list(bench.ALL_PEERS)
    assert re.search(r'^our default \(--dtype auto\) here: (bf16|int8|fp32) \(.+\): peer ours', out, re.M)


def test_the_backbone_alone_with_onnx_runtime_peers(bench, capsys):
    """The command of issue 60 that ended in a traceback: the backbone exported alone is timed as its own part."""
    bench.main([*NANO, '--tasks', 'backbone', '--peers', 'transformers', 'ours', 'ort-fp32', 'ort-int8'])
    out = capsys.readouterr().out
    assert rows(out, 'backbone') == ['transformers', 'ours', 'ort-fp32', 'ort-int8']
    line = re.search(r'^backbone +ort-fp32 .*$', out, re.M).group()
    assert float(re.search(r'rel L2 ([\d.e+-]+)', line).group(1)) < 1e-3, line  # the same function (fp32 RoPE)
    assert re.search(r'^backbone: ort-fp32 at \d+\.\d\dx ours \(torch eager fp32\)$', out, re.M)


@pytest.mark.parametrize('peers', [['ours'], ['ours-fast-int8'], ['ort-int8'], ['transformers-bf16w', 'ours-bf16']])
def test_a_few_peers_alone(bench, capsys, peers):
    bench.main([*NANO, '--tasks', 'backbone', '--peers', *peers])
    out = capsys.readouterr().out
    expected = list(dict.fromkeys(['transformers', 'ours', *(bench.ALIASES.get(p, p) for p in peers)]))
    assert rows(out, 'backbone') == expected


def test_peers_this_cpu_cannot_run_are_skipped_with_the_reason(bench, capsys, monkeypatch):
    monkeypatch.setattr(bench, 'cpu_runs_bf16', lambda: False)

    def refuse(dtype, device, backend='torch'):
        raise ValueError(f'dtype {dtype} with the torch backend needs a CPU with AVX2')
    monkeypatch.setattr(bench, 'check_dtype', refuse)
    monkeypatch.setattr(bench, 'ORT_MODULES', ('onnxruntime', 'no_such_module'))  # as without onnxscript
    bench.main([*NANO, '--tasks', 'backbone', '--peers', 'all'])
    out = capsys.readouterr().out
    assert re.search(r'^transformers-bf16 and ours-bf16 and ours-fast-bf16 and transformers-bf16w skipped: this CPU '
                     r'has neither AVX512-BF16 nor AMX', out, re.M)
    assert re.search(r'^ours-int8 skipped: dtype int8 with the torch backend needs a CPU with AVX2$', out, re.M)
    assert re.search(r'^ort-fp32 and ort-int8 and ort-fp32-op18 skipped: no_such_module not installed', out, re.M)
    assert rows(out, 'backbone') == ['transformers', 'ours', 'ours-fast']
