"""Fused q/k/v projection at inference."""
import pytest
import torch

from sapiens2.models.layers import Attention, RopePositionEmbedding


@pytest.mark.parametrize('num_kv_heads', [4, 2])
def test_fused_qkv_gives_the_separate_projections_result(num_kv_heads):
    torch.manual_seed(0)
    attn = Attention(128, 4, num_kv_heads, layer_scale_init_value=1e-4).eval()
    rope = RopePositionEmbedding(128, 4).tokens(5, 4, 9)
    x = torch.randn(2, 29, 128)
    with torch.no_grad():
        separate = attn(x, rope)
        fused = attn(x, rope, attn.fused_qkv())
    torch.testing.assert_close(fused, separate, rtol=1e-5, atol=1e-6)


def test_fused_qkv_is_built_once_and_rebuilt_after_a_weight_change():
    attn = Attention(64, 2).eval()
    with torch.no_grad():
        weight, bias = attn.fused_qkv()
        assert attn.fused_qkv()[0] is weight
        state = {k: torch.randn_like(v) for k, v in attn.state_dict().items()}
        attn.load_state_dict(state)
        new_weight, new_bias = attn.fused_qkv()
    assert new_weight is not weight
    assert torch.equal(new_weight, torch.cat([state['wq.weight'], state['wk.weight'], state['wv.weight']]))
    assert torch.equal(new_bias, torch.cat([state['wq.bias'], state['wk.bias'], state['wv.bias']]))
    assert set(attn.state_dict()) == set(state)  # checkpoint keys unchanged


def test_fused_qkv_refuses_to_run_with_gradients():
    with pytest.raises(RuntimeError, match='inference'):
        Attention(64, 2).fused_qkv()
