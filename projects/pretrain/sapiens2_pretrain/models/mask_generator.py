"""Patch mask generator mixing blockwise (random rectangles) and patchwise (uniform) masking."""
import math

import torch
from torch import Tensor

from sapiens2.registry import MODELS


@MODELS.register_module()
class MixedMaskGenerator:
    """Masks exactly ``round(mask_ratio * N)`` of the N patches of every view.

    Each view independently uses blockwise masking with probability ``block_prob`` and patchwise (uniform random)
    masking otherwise. Blockwise masking adds random rectangles (area between ``min_block_patches`` and what is
    still to be masked, aspect ratio log-uniform in [1/max_aspect, max_aspect]) until the target count is reached,
    never overshooting it; after ``max_attempts`` failed rectangles the remainder is filled uniformly.
    """

    def __init__(self,
                 mask_ratio: float = 0.75,
                 block_prob: float = 0.5,
                 min_block_patches: int = 4,
                 max_aspect: float = 3.0,
                 max_attempts: int = 100) -> None:
        if not 0.0 <= mask_ratio < 1.0:
            raise ValueError(f'mask_ratio must be in [0, 1), got {mask_ratio}')
        if not 0.0 <= block_prob <= 1.0:
            raise ValueError(f'block_prob must be in [0, 1], got {block_prob}')
        self.mask_ratio = mask_ratio
        self.block_prob = block_prob
        self.min_block_patches = min_block_patches
        self.log_aspect = math.log(max_aspect)
        self.max_attempts = max_attempts

    def num_masked(self, num_patches: int) -> int:
        """Number of masked patches for a view of ``num_patches`` patches."""
        return round(self.mask_ratio * num_patches)

    def __call__(self, batch_size: int, grid: tuple[int, int],
                 generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """Masks for ``batch_size`` views of a ``grid`` = (rows, cols) patch grid.

        Returns:
            mask: (B, N) bool, True = masked, patches in row-major order.
            keep_indices: (B, N - num_masked) long, the sorted indices of the visible patches.
        """
        rows, cols = grid
        num_patches = rows * cols
        target = self.num_masked(num_patches)
        masks = []
        for _ in range(batch_size):
            use_blocks = torch.rand((), generator=generator).item() < self.block_prob
            mask = self._blockwise(rows, cols, target, generator) if use_blocks else torch.zeros(
                num_patches, dtype=torch.bool)
            masks.append(self._fill_uniform(mask, target, generator))
        mask = torch.stack(masks)
        keep_indices = (~mask).nonzero()[:, 1].reshape(batch_size, num_patches - target)
        return mask, keep_indices

    def _blockwise(self, rows: int, cols: int, target: int, generator: torch.Generator | None) -> Tensor:
        """Row-major (rows*cols,) mask of non-overshooting random rectangles with at most ``target`` patches."""
        mask = torch.zeros(rows, cols, dtype=torch.bool)
        count = 0
        for _ in range(self.max_attempts):
            remaining = target - count
            if remaining <= 0:
                break
            hi = max(remaining, self.min_block_patches)
            area = self.min_block_patches + torch.rand((), generator=generator).item() * (hi - self.min_block_patches)
            aspect = math.exp((2 * torch.rand((), generator=generator).item() - 1) * self.log_aspect)
            h = int(round(math.sqrt(area * aspect)))
            w = int(round(math.sqrt(area / aspect)))
            if not (1 <= h <= rows and 1 <= w <= cols):
                continue
            top = int(torch.randint(0, rows - h + 1, (), generator=generator))
            left = int(torch.randint(0, cols - w + 1, (), generator=generator))
            new = int((~mask[top:top + h, left:left + w]).sum())
            if 0 < new <= remaining:
                mask[top:top + h, left:left + w] = True
                count += new
        return mask.flatten()

    @staticmethod
    def _fill_uniform(mask: Tensor, target: int, generator: torch.Generator | None) -> Tensor:
        """Masks uniformly random extra patches until exactly ``target`` are masked."""
        missing = target - int(mask.sum())
        if missing > 0:
            free = (~mask).nonzero().squeeze(1)
            chosen = free[torch.randperm(free.numel(), generator=generator)[:missing]]
            mask = mask.clone()
            mask[chosen] = True
        return mask
