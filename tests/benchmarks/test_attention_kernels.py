"""``benchmarks/attention_kernels.py`` on a small layer: every kernel row in both dtypes, each computing attention
(close to fp32 SDPA); no timing is asserted."""
import re

from tests.scripts import load_script


def test_every_kernel_computes_attention(capsys):
    load_script('benchmarks/attention_kernels.py').main(['--tokens', '128', '--heads', '2', '--head-dim', '16',
                                                         '--repeats', '1'])
    rows = re.findall(r'^\| (float32|bfloat16) \| ([^|]+) \| ([\d.]+) \| (\d+) \| ([\d.e+-]+) \|$',
                      capsys.readouterr().out, re.M)
    assert len(rows) == 7
    for dtype, kernel, seconds, _, error in rows:
        assert float(error) < (1e-5 if dtype == 'float32' else 2e-2), (dtype, kernel)
    assert {row[1] for row in rows} == {'SDPA (fused CPU kernel)', 'unfused', 'flex_attention, compiled',
                                        "blocked (sapiens2: the backbone's bf16 path without AMX)"}
