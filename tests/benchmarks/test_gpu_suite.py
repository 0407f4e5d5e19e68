"""The GPU suite's dry run: every measurement once, on the CPU, with the tiny arch (no timing is asserted)."""
import json
import os
import os.path as osp
import subprocess
import sys

import pytest

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
sys.path.insert(0, osp.join(ROOT, 'benchmarks', 'gpu'))


def test_dry_run_settings():
    import suite
    args = suite.parse_args(['--dry-run'])
    assert args.archs == ['sapiens2_tiny'] and args.size == (64, 48)
    assert args.infer_iters == args.train_iters == 1 and args.warmup == 0 and args.compile == 'off'
    assert args.infer_batches == [1, 2] and suite.parse_args([]).infer_batches == [1, 4, 16]


def test_datasheet_peak_by_gpu_name():
    import suite
    assert suite.datasheet_peak('NVIDIA H200') == pytest.approx(989.4e12)
    assert suite.datasheet_peak('Some Unknown GPU') is None and suite.datasheet_peak(None) is None


@pytest.mark.slow
def test_dry_run_writes_the_table_and_json(tmp_path):
    out = tmp_path / 'suite.json'
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(['bash', osp.join(ROOT, 'benchmarks/gpu/run.sh'), '--dry-run', '--json', str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    rows = {(r['part'], r['peer'].split(' ')[0], r['mode']): r for r in result['rows']}
    eager = rows[('inference', 'ours', 'eager')]
    assert eager['images_per_s'] > 0 and eager['sdpa'] and eager['rel_l2_vs_ours_eager'] == 0
    train = rows[('train step', 'ours', 'eager')]
    assert train['step_tflop'] > 0 and 0 < train['mfu_measured']
    peer = rows[('inference', 'transformers', 'eager')]
    assert 'error' not in peer, peer
    assert peer['rel_l2_vs_ours_eager'] < 0.1
    exported = rows[('inference', 'exported', 'bf16')]  # the task model exported in bf16 (.pt2), loaded and run
    assert 'error' not in exported, exported
    assert exported['images_per_s'] > 0 and 0 < exported['rel_l2_vs_ours_eager'] < 0.1
    assert result['environment']['torch'] and 'arch' in proc.stdout and 'JSON:' in proc.stdout
    by_batch = {(r['batch'], r['peer'].split(' ')[0], r['mode']): r for r in result['rows'] if r['part'] == 'inference'}
    for batch in (1, 2):  # fp32, bf16 and what auto runs, with peak memory, at each batch size
        fp32, bf16, auto = (by_batch[(batch, 'ours', mode)] for mode in ('fp32', 'eager', 'auto'))
        assert fp32['dtype'] == 'fp32' and 0 < fp32['rel_l2_vs_ours_eager'] < 0.1 and bf16['dtype'] == 'bf16'
        assert auto['dtype'] in ('fp32', 'bf16') and auto['ms'] == by_batch[(batch, 'ours', auto['same_as'])]['ms']
        assert all(r['peak_gib'] > 0 for r in (fp32, bf16))
        assert 'error' not in by_batch[(batch, 'transformers', 'eager')]


def test_rows_are_saved_as_they_come(tmp_path, monkeypatch):
    """A run stopped part-way (a time limit on a lent GPU) keeps the rows measured before it."""
    import suite

    def stopped(*args, **kwargs):
        raise TimeoutError('stopped during training')

    monkeypatch.setattr(suite, 'training', stopped)
    out = tmp_path / 'suite.json'
    with pytest.raises(TimeoutError):
        suite.main(['--dry-run', '--no-transformers', '--no-exported', '--infer-batches', '1', '--json', str(out)])
    rows = json.loads(out.read_text())['rows']
    assert rows and {row['part'] for row in rows} == {'inference'}
