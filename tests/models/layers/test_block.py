"""Chunked feed-forward at inference."""
import torch

from sapiens2.models.layers import TransformerBlock


def test_chunked_ffn_equals_one_pass_and_leaves_the_input_alone():
    torch.manual_seed(0)
    block = TransformerBlock(64, 2, 256, layer_scale_init_value=1e-4).eval()
    x = torch.randn(3, 50, 64)
    before = x.clone()
    with torch.no_grad():
        whole = block(x)
        block.ffn_chunk_tokens = 16  # 150 tokens of the batch -> 10 chunks, crossing sample boundaries
        chunked = block(x)
    torch.testing.assert_close(chunked, whole, rtol=1e-5, atol=1e-6)
    assert torch.equal(x, before)


def test_chunked_ffn_is_not_used_with_gradients():
    block = TransformerBlock(64, 2, 256, ffn_chunk_tokens=16)
    x = torch.randn(2, 20, 64, requires_grad=True)
    block(x).sum().backward()
    assert x.grad is not None and all(p.grad is not None for p in block.parameters())
