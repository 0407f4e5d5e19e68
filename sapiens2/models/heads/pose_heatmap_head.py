"""Sapiens2 top-down heatmap head (308 keypoints), laid out as the official ``PoseHeatmapHead``."""
from typing import Sequence, Tuple

from mmpose.models.heads import HeatmapHead
from mmpose.registry import MODELS
from mmpose.utils.typing import ConfigType, OptConfigType
from torch import Tensor, nn


@MODELS.register_module()
class Sapiens2HeatmapHead(HeatmapHead):
    """mmpose ``HeatmapHead`` with the layers and parameter names of the official ``PoseHeatmapHead``.

    ``deconv_layers`` = [ConvTranspose2d(no bias), InstanceNorm2d, SiLU] per stage (keys ``deconv_layers.{0,3}``),
    ``conv_layers`` = [Conv2d, InstanceNorm2d, SiLU] per stage (keys ``conv_layers.{0,3,6}``), then the 1x1
    ``conv_pose``. InstanceNorm has no affine parameters and no running stats, so it adds no state-dict keys and an
    official checkpoint (``decode_head.*`` renamed to ``head.*``) loads strictly.

    Args:
        in_channels: Backbone feature channels (the Sapiens2 ``embed_dims``).
        out_channels: Number of keypoints (heatmap channels).
        deconv_out_channels / deconv_kernel_sizes: Upsampling stages (kernels 2, 3 or 4; stride 2 each).
        conv_out_channels / conv_kernel_sizes: Stride-1 conv stages (odd kernels).
        loss: Keypoint loss; defaults to mmpose ``KeypointMSELoss`` with target weights and weight 10 (official).
        decoder: Keypoint codec used to decode heatmaps (e.g. ``UDPHeatmap``).
        init_cfg: Defaults to Kaiming-normal (fan_out, ReLU gain, zero bias) on every Conv2d and ConvTranspose2d.
    """

    def __init__(self,
                 in_channels: int,
                 out_channels: int = 308,
                 deconv_out_channels: Sequence[int] = (1024, 768),
                 deconv_kernel_sizes: Sequence[int] = (4, 4),
                 conv_out_channels: Sequence[int] = (512, 512, 256),
                 conv_kernel_sizes: Sequence[int] = (1, 1, 1),
                 loss: ConfigType = dict(type='KeypointMSELoss', use_target_weight=True, loss_weight=10.0),
                 decoder: OptConfigType = None,
                 init_cfg: OptConfigType = None) -> None:
        for kernel in conv_kernel_sizes or ():
            if kernel % 2 != 1:
                raise ValueError(f'conv_kernel_sizes must be odd (same padding), got {tuple(conv_kernel_sizes)}.')
        super().__init__(
            in_channels=in_channels,
            out_channels=out_channels,
            deconv_out_channels=deconv_out_channels,
            deconv_kernel_sizes=deconv_kernel_sizes,
            conv_out_channels=conv_out_channels,
            conv_kernel_sizes=conv_kernel_sizes,
            final_layer=None,
            loss=loss,
            decoder=decoder,
            init_cfg=init_cfg)
        del self.final_layer
        last_channels = (conv_out_channels or deconv_out_channels or (in_channels, ))[-1]
        self.conv_pose = nn.Conv2d(last_channels, out_channels, kernel_size=1)

    @property
    def default_init_cfg(self) -> list:
        return [dict(type='Kaiming', layer=['Conv2d', 'ConvTranspose2d'], mode='fan_out', nonlinearity='relu',
                     distribution='normal', bias=0)]

    def _make_deconv_layers(self, in_channels: int, layer_out_channels: Sequence[int],
                            layer_kernel_sizes: Sequence[int]) -> nn.Sequential:
        """[ConvTranspose2d(stride 2, no bias), InstanceNorm2d, SiLU] per stage."""
        paddings = {4: (1, 0), 3: (1, 1), 2: (0, 0)}
        layers = []
        for out_channels, kernel in zip(layer_out_channels, layer_kernel_sizes):
            if kernel not in paddings:
                raise ValueError(f'Unsupported deconv kernel size {kernel} in {type(self).__name__}; use 2, 3 or 4.')
            padding, output_padding = paddings[kernel]
            layers += [
                nn.ConvTranspose2d(in_channels, out_channels, kernel, stride=2, padding=padding,
                                   output_padding=output_padding, bias=False),
                nn.InstanceNorm2d(out_channels),
                nn.SiLU(inplace=True)
            ]
            in_channels = out_channels
        return nn.Sequential(*layers)

    def _make_conv_layers(self, in_channels: int, layer_out_channels: Sequence[int],
                          layer_kernel_sizes: Sequence[int]) -> nn.Sequential:
        """[Conv2d(stride 1, same padding, bias), InstanceNorm2d, SiLU] per stage."""
        layers = []
        for out_channels, kernel in zip(layer_out_channels, layer_kernel_sizes):
            layers += [
                nn.Conv2d(in_channels, out_channels, kernel, stride=1, padding=(kernel - 1) // 2),
                nn.InstanceNorm2d(out_channels),
                nn.SiLU(inplace=True)
            ]
            in_channels = out_channels
        return nn.Sequential(*layers)

    def forward(self, feats: Tuple[Tensor]) -> Tensor:
        """Map the last feature map (B, C, h, w) to heatmaps (B, K, h * 2^n_deconv, w * 2^n_deconv)."""
        return self.conv_pose(self.conv_layers(self.deconv_layers(feats[-1])))

    def _load_state_dict_pre_hook(self, state_dict: dict, prefix: str, local_meta: dict, *args, **kwargs) -> None:
        """No legacy key conversion: the official layout is the only one this head knows."""
