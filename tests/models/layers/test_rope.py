"""RoPE tables for whole sequences, their cache, and bitwise agreement with the official rotation."""
import pytest
import torch

from sapiens2.models.layers.rope import RopePositionEmbedding, apply_rope, token_tables


def official_rope(x: torch.Tensor, sin: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
    """The official formulation: slice off the prefix, ``t * cos + rotate_half(t) * sin`` in the tables' dtype."""
    if sin.dim() == 3:
        sin, cos = sin[:, None], cos[:, None]
    in_dtype, x = x.dtype, x.to(sin.dtype)
    prefix, tokens = x[..., :x.shape[-2] - sin.shape[-2], :], x[..., x.shape[-2] - sin.shape[-2]:, :]
    first, second = tokens.chunk(2, dim=-1)
    tokens = tokens * cos + torch.cat((-second, first), dim=-1) * sin
    return torch.cat((prefix, tokens), dim=-2).to(in_dtype)


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float32])
@pytest.mark.parametrize('scale', [1e-3, 1.0, 1e3])
def test_whole_sequence_rotation_is_bitwise_official(dtype, scale):
    torch.manual_seed(0)
    rope = RopePositionEmbedding(256, 4, dtype=dtype)
    x = torch.randn(2, 4, 9 + 7 * 5, 64) * scale
    sin, cos = rope(7, 5)
    assert torch.equal(apply_rope(x, token_tables(sin, cos, 9)), official_rope(x, sin, cos))
    keep = torch.stack([torch.randperm(35)[:6] for _ in range(2)])
    sin, cos = rope(7, 5, keep)
    assert torch.equal(apply_rope(x[:, :, :15], token_tables(sin, cos, 9)), official_rope(x[:, :, :15], sin, cos))


def test_token_tables_are_cached_per_grid_and_rebuilt_when_periods_change():
    rope = RopePositionEmbedding(256, 4).eval()
    with torch.no_grad():
        first = rope.tokens(6, 4, 9)
        assert rope.tokens(6, 4, 9) is first
        assert rope.tokens(4, 6, 9) is not first and rope.tokens(6, 4, 1) is not first
        rope.periods.copy_(rope.periods * 2)
        rebuilt = rope.tokens(6, 4, 9)
    assert rebuilt is not first and not torch.equal(rebuilt[0], first[0])
    torch.testing.assert_close(rebuilt[1], token_tables(*rope(6, 4), 9)[1], rtol=0, atol=0)


def test_token_tables_are_not_cached_with_gradients_keep_indices_or_augmentation():
    rope = RopePositionEmbedding(256, 4, jitter_coords=2.0).train()
    with torch.no_grad():
        assert rope.tokens(6, 4, 9) is not rope.tokens(6, 4, 9)  # training with jitter: fresh coordinates
        rope.eval()
        keep = torch.tensor([[0, 3]])
        assert rope.tokens(6, 4, 9, keep) is not rope.tokens(6, 4, 9, keep)
    assert rope.tokens(6, 4, 9) is not rope.tokens(6, 4, 9)  # gradients enabled
