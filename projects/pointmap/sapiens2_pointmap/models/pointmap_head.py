"""Pointmap head: the dense trunk -> canonical XYZ, plus a focal-scale branch on the backbone features."""
import math
from typing import Dict, Optional, Sequence, Tuple

import torch
from mmengine.structures import PixelData
from torch import nn

from sapiens2.models.heads.dense_trunk_head import DenseTrunkHead
from sapiens2.registry import MODELS


def strided_grid(grid_hw: Sequence[int], num_layers: int) -> Tuple[int, int]:
    """Grid after ``num_layers`` stride-2 1x1 convs (padding 0): each maps n -> ceil(n / 2)."""
    height, width = grid_hw
    for _ in range(num_layers):
        height, width = math.ceil(height / 2), math.ceil(width / 2)
    return height, width


@MODELS.register_module()
class PointmapHead(DenseTrunkHead):
    """Canonical pointmap (B, 3, 16h, 16w) and scale (B, 1).

    The scale branch is ``scale_conv_layers`` (per channel: Conv1x1 stride 2 -> IN -> SiLU) on the backbone feature
    map, then ``scale_final_layer`` = Flatten -> Linear -> SiLU -> ... -> Linear(-> 1). Its first Linear takes
    ``channels[-1] * h' * w'`` inputs, computed from ``img_size`` (6144 at 1024x768), so the head only accepts the
    token grid it was built for.

    Args:
        img_size: Network input (H, W).
        patch_size: Backbone patch size (feature stride).
        scale_conv_out_channels: Channels of the stride-2 scale convs.
        scale_hidden_channels: Hidden widths of the scale MLP.
        Other args: see :class:`DenseTrunkHead`.
    """

    def __init__(self,
                 in_channels: int,
                 img_size: Sequence[int] = (1024, 768),
                 patch_size: int = 16,
                 upsample_channels: Sequence[int] = (1536, 768, 512, 256),
                 conv_out_channels: Sequence[int] = (64, 32, 16),
                 conv_kernel_sizes: Optional[Sequence[int]] = None,
                 scale_conv_out_channels: Sequence[int] = (1536, 512, 128),
                 scale_hidden_channels: Sequence[int] = (512, 128),
                 loss_decode=None,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(in_channels, upsample_channels, conv_out_channels, conv_kernel_sizes, 'IN', loss_decode,
                         init_cfg)
        if img_size[0] % patch_size or img_size[1] % patch_size:
            raise ValueError(f'img_size {tuple(img_size)} must be a multiple of patch_size {patch_size}.')
        self.img_size, self.patch_size = tuple(img_size), patch_size
        self.grid_size = (img_size[0] // patch_size, img_size[1] // patch_size)
        layers, channels = [], in_channels
        for out_channels in scale_conv_out_channels:
            layers += [nn.Conv2d(channels, out_channels, 1, stride=2), nn.InstanceNorm2d(out_channels), nn.SiLU()]
            channels = out_channels
        self.scale_conv_layers = nn.Sequential(*layers)
        scale_grid = strided_grid(self.grid_size, len(scale_conv_out_channels))
        mlp: list = [nn.Flatten()]
        width = channels * scale_grid[0] * scale_grid[1]
        for hidden in scale_hidden_channels:
            mlp += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        self.scale_final_layer = nn.Sequential(*mlp, nn.Linear(width, 1))
        self.conv_pointmap = nn.Conv2d(self.trunk_channels, 3, 1)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if tuple(x.shape[-2:]) != self.grid_size:
            raise ValueError(f'PointmapHead was built for a {self.grid_size[0]}x{self.grid_size[1]} token grid '
                             f'(img_size {self.img_size}, patch {self.patch_size}) but got a {x.shape[-2]}x'
                             f'{x.shape[-1]} feature map; set the head img_size to the network input size.')
        scale = self.scale_final_layer(self.scale_conv_layers(x))
        return self.conv_pointmap(self.forward_trunk(x)), scale

    def loss_by_feat(self, outputs: Tuple[torch.Tensor, torch.Tensor],
                     data_samples: Sequence) -> Dict[str, torch.Tensor]:
        pointmap, scale = outputs
        target, mask = self.stack_targets(data_samples)
        context = dict(
            pred_scale=scale,
            gt_scale=torch.stack([s.gt_scale for s in data_samples]).reshape(-1, 1).to(pointmap),
            mean_depth=torch.stack([s.gt_mean_depth for s in data_samples]).reshape(-1, 1, 1, 1).to(pointmap),
            cam_K=torch.stack([s.original_K for s in data_samples]).to(pointmap))
        return self.apply_losses(pointmap, target.to(pointmap), mask.to(pointmap.device), **context)

    def postprocess(self, outputs: Tuple[torch.Tensor, torch.Tensor]) -> Dict[str, torch.Tensor]:
        pointmap, scale = outputs
        return dict(map=pointmap, pred_scale=scale)

    def postprocess_sample(self, prediction: dict) -> dict:
        """Add ``pred_pointmap``: the metric pointmap = canonical pointmap / predicted scale (the official
        ``vis_pointmap.py``). ``pred_dense`` stays canonical, as the metric compares it with canonical targets."""
        scale = prediction['pred_scale'].reshape(()).float().clamp_min(1e-6)
        prediction['pred_pointmap'] = PixelData(data=prediction['pred_dense'].data.float() / scale)
        return prediction
