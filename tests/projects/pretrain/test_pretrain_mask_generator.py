"""Mask generator: exact masked count, blockwise vs patchwise structure, keep indices."""
import pytest
import torch

from sapiens2_pretrain.models import MixedMaskGenerator


@pytest.mark.parametrize('grid', [(8, 6), (64, 48), (5, 7)])
@pytest.mark.parametrize('block_prob', [0.0, 0.5, 1.0])
def test_exact_masked_count_and_keep_indices(grid, block_prob):
    gen = MixedMaskGenerator(mask_ratio=0.75, block_prob=block_prob)
    num = grid[0] * grid[1]
    mask, keep = gen(6, grid, generator=torch.Generator().manual_seed(0))
    target = round(0.75 * num)
    assert mask.shape == (6, num) and mask.dtype == torch.bool
    assert (mask.sum(dim=1) == target).all()
    assert keep.shape == (6, num - target)
    for row_mask, row_keep in zip(mask, keep):
        torch.testing.assert_close(row_keep, (~row_mask).nonzero().squeeze(1))


def test_paper_count_at_1024x768():
    assert MixedMaskGenerator().num_masked(64 * 48) == 2304


def _masked_neighbour_pairs(mask: torch.Tensor, grid) -> float:
    m = mask.reshape(-1, *grid)
    return float((m[:, 1:] & m[:, :-1]).sum() + (m[:, :, 1:] & m[:, :, :-1]).sum()) / m.shape[0]


def test_blockwise_is_more_contiguous_than_patchwise():
    grid = (32, 24)
    g = torch.Generator().manual_seed(1)
    blocks, _ = MixedMaskGenerator(mask_ratio=0.5, block_prob=1.0)(16, grid, generator=g)
    uniform, _ = MixedMaskGenerator(mask_ratio=0.5, block_prob=0.0)(16, grid, generator=g)
    assert _masked_neighbour_pairs(blocks, grid) > 1.2 * _masked_neighbour_pairs(uniform, grid)


def test_mix_uses_both_modes_and_validates():
    gen = MixedMaskGenerator(mask_ratio=0.5, block_prob=0.5)
    grid = (16, 16)
    mask, _ = gen(64, grid, generator=torch.Generator().manual_seed(2))
    pairs = torch.tensor([_masked_neighbour_pairs(m[None], grid) for m in mask])
    # uniform masks at 50% have ~120 neighbouring masked pairs (480 pairs x 1/4), block masks ~200+
    num_blockwise = int((pairs > 170).sum())
    assert 16 <= num_blockwise <= 48
    with pytest.raises(ValueError, match='mask_ratio'):
        MixedMaskGenerator(mask_ratio=1.0)
