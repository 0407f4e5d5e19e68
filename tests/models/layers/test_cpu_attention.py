"""Blocked bf16 attention on the CPU: the same function as torch's fused kernel, used only where it applies."""
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

from sapiens2.models.layers import Attention, RopePositionEmbedding, cpu_attention


def _qkv(heads, kv_heads, tokens, batch=1, dims=64):
    torch.manual_seed(0)
    return (torch.randn(batch, heads, tokens, dims), torch.randn(batch, kv_heads, tokens, dims),
            torch.randn(batch, kv_heads, tokens, dims))


@pytest.fixture(autouse=True)
def _without_amx():
    """The blocked path is the one for CPUs without AMX; the tests run it whatever this machine has."""
    with mock.patch.object(cpu_attention, 'fused_kernel_uses_amx', return_value=False):
        yield


def _rel_error(x, reference):
    return ((x.float() - reference).norm() / reference.norm()).item()


@pytest.mark.parametrize('heads,kv_heads,tokens,batch', [(2, 2, 192, 1), (4, 2, 300, 2), (4, 1, 600, 1)])
def test_blocked_bf16_attention_matches_fp32_within_bf16_error(heads, kv_heads, tokens, batch):
    """Several query blocks (a last one shorter), GQA groups and a batch: each head must meet its own kv head."""
    q, k, v = _qkv(heads, kv_heads, tokens, batch)
    reference = F.scaled_dot_product_attention(q, k, v, enable_gqa=heads != kv_heads)
    with torch.inference_mode(), mock.patch.object(cpu_attention, 'QUERY_BLOCK', 128):
        assert cpu_attention.uses_blocked_attention(q.bfloat16())
        out = cpu_attention.self_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), enable_gqa=heads != kv_heads)
        fused = F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(),
                                               enable_gqa=heads != kv_heads)
    assert out.dtype == torch.bfloat16 and out.shape == reference.shape
    assert _rel_error(out, reference) < 1e-2
    assert _rel_error(out, reference) < 2 * _rel_error(fused, reference)  # bf16 scores: at most twice the fused error
    # a head paired with another head's keys would be far off:
    assert _rel_error(out[:, :1], reference[:, :1]) < 1e-2 and _rel_error(out[:, -1:], reference[:, -1:]) < 1e-2


def test_fp32_and_training_stay_on_torchs_kernel():
    q, k, v = _qkv(2, 2, 256)
    with torch.no_grad():
        assert torch.equal(cpu_attention.self_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))
    q_train = q.bfloat16().requires_grad_()
    assert not cpu_attention.uses_blocked_attention(q_train)
    out = cpu_attention.self_attention(q_train, k.bfloat16(), v.bfloat16())
    out.float().sum().backward()
    assert q_train.grad is not None and q_train.grad.abs().sum() > 0
    k_train = k.bfloat16().requires_grad_()  # frozen queries, trained keys
    cpu_attention.self_attention(q.bfloat16(), k_train, v.bfloat16()).float().sum().backward()
    assert k_train.grad is not None and k_train.grad.abs().sum() > 0
    assert not cpu_attention.uses_blocked_attention(torch.empty(1, 2, 256, 8, dtype=torch.bfloat16, device='meta'))
    # the 4K tokenizer's windows: many short sequences, one batched call is faster than a product per window
    assert not cpu_attention.uses_blocked_attention(torch.empty(128, 2, 17, 8, dtype=torch.bfloat16))


def test_attention_layer_under_autocast_takes_the_blocked_path():
    torch.manual_seed(0)
    attn = Attention(128, 2).eval()
    rope = RopePositionEmbedding(128, 2).tokens(12, 16, 1)
    x = torch.randn(1, 193, 128)  # a prefix token and the 12 x 16 grid
    with torch.inference_mode():
        reference = attn(x, rope)
        with torch.autocast('cpu', torch.bfloat16), mock.patch.object(
                cpu_attention, 'blocked_attention', wraps=cpu_attention.blocked_attention) as blocked:
            out = attn(x, rope)
    assert blocked.call_count == 1
    assert _rel_error(out, reference) < 2e-2


def test_amx_cpus_keep_torchs_fused_kernel():
    """With AMX torch's fused kernel computes bf16 natively and is faster than the blocks."""
    q, k, v = (t.bfloat16() for t in _qkv(2, 2, 256))
    with torch.inference_mode(), mock.patch.object(cpu_attention, 'fused_kernel_uses_amx', return_value=True):
        assert not cpu_attention.uses_blocked_attention(q)
        assert torch.equal(cpu_attention.self_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))
