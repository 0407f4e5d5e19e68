"""``CompiledBlockRunner``: compiled blocks, and the eager fallback when compiling fails."""
import warnings

import pytest
import torch

from sapiens2.models import Sapiens2
from sapiens2.models.layers import TransformerBlock, compiled_block
from sapiens2.models.layers.compiled_block import CompiledBlockRunner


def broken_compiler():
    def compiled(*args):
        raise RuntimeError('no C++ compiler (simulated)')
    return compiled


def test_failed_compile_warns_once_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(compiled_block, 'compiled_call_block', broken_compiler)
    block, runner = TransformerBlock(64, 2, 128).eval(), CompiledBlockRunner()
    x = torch.randn(1, 5, 64)
    with pytest.warns(RuntimeWarning, match='running the blocks eagerly'):
        out = runner(block, x)
    assert runner.failed
    torch.testing.assert_close(out, block(x), rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        runner(block, x)  # later calls run eagerly without warning again


def test_input_errors_propagate_instead_of_disabling_compile(monkeypatch):
    monkeypatch.setattr(compiled_block, 'compiled_call_block', broken_compiler)
    runner = CompiledBlockRunner()
    with pytest.raises(RuntimeError):
        runner(TransformerBlock(64, 2, 128), torch.randn(1, 5, 32))  # wrong width: eager fails too
    assert not runner.failed


@pytest.mark.slow
def test_compiled_backbone_matches_eager():
    """fp32 RoPE: the compiled blocks agree with eager to fp32 rounding (bf16 RoPE can flip roundings on top)."""
    torch.manual_seed(0)
    kwargs = dict(arch='sapiens2_nano', img_size=(64, 48), out_type='featmap', pos_embed_rope_dtype='fp32')
    eager = Sapiens2(**kwargs).eval()
    eager.init_weights()
    fast = Sapiens2(**kwargs, compile=True, fuse_qkv=True).eval()
    fast.load_state_dict(eager.state_dict())
    x = torch.randn(2, 3, 64, 48)
    with torch.no_grad():
        expected, out = eager(x)[0], fast(x)[0]
    assert not fast.block_runner.failed
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
