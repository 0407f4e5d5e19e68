"""MAE decoder: fills masked positions with a learned mask token and predicts the pixels of every patch."""
import torch
from mmengine.model import BaseModule
from torch import Tensor, nn

from sapiens2.registry import MODELS


def sincos_pos_embed_2d(dim: int, grid: tuple[int, int]) -> Tensor:
    """Fixed 2-D sine-cosine embedding (rows*cols, dim): half the channels encode the row, half the column."""
    if dim % 4:
        raise ValueError(f'sin-cos position embedding needs a dim divisible by 4, got {dim}')
    rows, cols = grid
    omega = 1.0 / 10000 ** (torch.arange(dim // 4, dtype=torch.float64) / (dim / 4))
    r, c = torch.meshgrid(torch.arange(rows, dtype=torch.float64), torch.arange(cols, dtype=torch.float64),
                          indexing='ij')
    parts = []
    for coord in (r.flatten(), c.flatten()):
        angles = coord[:, None] * omega[None]
        parts += [angles.sin(), angles.cos()]
    return torch.cat(parts, dim=1).float()


@MODELS.register_module()
class MAEDecoder(BaseModule):
    """Lightweight transformer decoder over [prefix tokens, all patch positions].

    Encoder tokens (prefix + visible patches) are projected to ``embed_dims``, scattered to their grid positions,
    the masked positions get ``mask_token``, a fixed sin-cos position embedding is added to patch positions, and
    ``num_layers`` pre-norm transformer layers run before a linear prediction of ``patch_size**2 * in_channels``
    values per patch (prefix outputs dropped).
    """

    def __init__(self,
                 in_channels: int,
                 embed_dims: int = 512,
                 num_layers: int = 8,
                 num_heads: int = 16,
                 mlp_ratio: float = 4.0,
                 patch_size: int = 16,
                 out_channels: int = 3,
                 num_prefix_tokens: int = 9,
                 init_cfg: dict | list | None = dict(type='Xavier', layer='Linear', distribution='uniform')) -> None:
        super().__init__(init_cfg=init_cfg)
        self.num_prefix_tokens = num_prefix_tokens
        self.embed = nn.Linear(in_channels, embed_dims)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, embed_dims))
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(embed_dims, num_heads, dim_feedforward=int(embed_dims * mlp_ratio), dropout=0.0,
                                       activation='gelu', batch_first=True, norm_first=True)
            for _ in range(num_layers))
        self.norm = nn.LayerNorm(embed_dims)
        self.pred = nn.Linear(embed_dims, patch_size**2 * out_channels)

    def init_weights(self) -> None:
        super().init_weights()
        nn.init.normal_(self.mask_token, std=0.02)

    def forward(self, tokens: Tensor, keep_indices: Tensor, grid: tuple[int, int]) -> Tensor:
        """Args:
            tokens: (B, P + K, C) encoder output, P prefix tokens then the K visible patches in keep order.
            keep_indices: (B, K) row-major grid indices of the visible patches.
            grid: (rows, cols) of the full patch grid.

        Returns: (B, rows * cols, patch_size**2 * out_channels) per-patch predictions.
        """
        b, k = keep_indices.shape
        p = self.num_prefix_tokens
        if tokens.shape[:2] != (b, p + k):
            raise ValueError(f'MAEDecoder expected tokens of shape ({b}, {p + k}, C), got {tuple(tokens.shape)}')
        x = self.embed(tokens)
        num_patches = grid[0] * grid[1]
        patches = self.mask_token.expand(b, num_patches, -1).to(x.dtype).clone()
        patches.scatter_(1, keep_indices[..., None].expand(-1, -1, x.shape[-1]), x[:, p:])
        patches = patches + sincos_pos_embed_2d(x.shape[-1], grid).to(x)
        x = torch.cat([x[:, :p], patches], dim=1)
        for layer in self.layers:
            x = layer(x)
        return self.pred(self.norm(x[:, p:]))
