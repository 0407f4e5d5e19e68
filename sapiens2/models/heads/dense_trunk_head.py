"""The PixelShuffle trunk shared by the normal, pointmap and albedo heads (as in the official ``NormalHead``)."""
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from mmengine.model import BaseModule
from mmengine.structures import PixelData
from torch import nn

from sapiens2.models.layers.rmsnorm2d import RMSNorm2d
from sapiens2.registry import MODELS
from sapiens2.structures.letterbox import unletterbox

NORM_LAYERS = ('IN', 'RMSNorm2d')


def build_dense_norm(norm: str, num_channels: int) -> nn.Module:
    """Build the per-pixel normalisation of the trunk.

    ``'IN'`` is ``nn.InstanceNorm2d`` with defaults (no parameters, no state-dict keys); ``'RMSNorm2d'`` is an RMSNorm
    over channels with a learnable weight (key ``.norm.weight``).
    """
    if norm == 'IN':
        return nn.InstanceNorm2d(num_channels)
    if norm == 'RMSNorm2d':
        return RMSNorm2d(num_channels)
    raise ValueError(f'Unknown dense head norm {norm!r}; choose one of {NORM_LAYERS}.')


class DenseTrunkHead(BaseModule):
    """Base head: ``input_conv`` -> ``upsample_blocks`` (x2 each) -> ``conv_layers``.

    * ``input_conv``: Conv3x3 (C -> C) -> norm -> SiLU.
    * ``upsample_blocks[i]``: Conv3x3 (cur -> 4c) -> PixelShuffle(2) -> norm(c) -> SiLU.
    * ``conv_layers``: one flat Sequential of [Conv kxk -> norm -> SiLU] per entry.

    The layers are attributes of the subclass itself (not a submodule), so the state-dict keys are exactly the
    official ``decode_head.input_conv.0.weight``... Subclasses add their output layer, implement ``forward`` on top
    of :meth:`forward_trunk`, and ``loss_by_feat``.

    Args:
        in_channels: Backbone feature channels C.
        upsample_channels: Output channels of each x2 upsample block.
        conv_out_channels: Output channels of the final conv layers.
        conv_kernel_sizes: Kernel size of each final conv layer (default 3 for all).
        norm: ``'IN'`` (normal, pointmap) or ``'RMSNorm2d'`` (albedo).
        loss_decode: Loss config(s) built from the sapiens2 MODELS registry.
        init_cfg: MMEngine init config.
    """

    def __init__(self,
                 in_channels: int,
                 upsample_channels: Sequence[int],
                 conv_out_channels: Sequence[int],
                 conv_kernel_sizes: Optional[Sequence[int]] = None,
                 norm: str = 'IN',
                 loss_decode: Union[dict, Sequence[dict], None] = None,
                 init_cfg: Optional[dict] = None) -> None:
        super().__init__(init_cfg=init_cfg)
        conv_kernel_sizes = conv_kernel_sizes or [3] * len(conv_out_channels)
        if len(conv_kernel_sizes) != len(conv_out_channels):
            raise ValueError(f'conv_kernel_sizes {list(conv_kernel_sizes)} and conv_out_channels '
                             f'{list(conv_out_channels)} must have the same length.')
        self.in_channels = in_channels
        self.input_conv = nn.Sequential(
            nn.Conv2d(in_channels, in_channels, 3, padding=1), build_dense_norm(norm, in_channels), nn.SiLU())
        self.upsample_blocks = nn.ModuleList()
        channels = in_channels
        for out_channels in upsample_channels:
            self.upsample_blocks.append(
                nn.Sequential(
                    nn.Conv2d(channels, 4 * out_channels, 3, padding=1), nn.PixelShuffle(2),
                    build_dense_norm(norm, out_channels), nn.SiLU()))
            channels = out_channels
        layers = []
        for out_channels, kernel_size in zip(conv_out_channels, conv_kernel_sizes):
            layers += [
                nn.Conv2d(channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2),
                build_dense_norm(norm, out_channels),
                nn.SiLU()
            ]
            channels = out_channels
        self.conv_layers = nn.Sequential(*layers)
        self.trunk_channels = channels
        self.losses = nn.ModuleList(MODELS.build(cfg) for cfg in self._as_list(loss_decode))

    def trunk_widths(self) -> Dict[str, List[int]]:
        """The widths of the built trunk as constructor arguments (``upsample_channels``, ``conv_out_channels``,
        ``conv_kernel_sizes``), to compare with those a Hub ``config.json`` gives."""
        upsample = [block[0] for block in self.upsample_blocks]
        convs = [m for m in self.conv_layers.modules() if type(m) is nn.Conv2d]
        return dict(upsample_channels=[m.out_channels // 4 for m in upsample],
                    conv_out_channels=[m.out_channels for m in convs],
                    conv_kernel_sizes=[m.kernel_size[0] for m in convs])

    @staticmethod
    def _as_list(cfg: Union[dict, Sequence[dict], None]) -> List[dict]:
        if cfg is None:
            return []
        return [cfg] if isinstance(cfg, dict) else list(cfg)

    def init_weights(self) -> None:
        """Kaiming-normal init (conv: fan_out/ReLU gain; linear: fan_in/linear gain), zero biases (official)."""
        super().init_weights()
        if self.init_cfg is not None:
            return
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(module, nn.Linear):
                nn.init.kaiming_normal_(module.weight, mode='fan_in', nonlinearity='linear')
            else:
                continue
            if module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward_trunk(self, x: torch.Tensor) -> torch.Tensor:
        """Feature map (B, C, h, w) -> trunk features (B, c, 16h, 16w) for four upsample blocks."""
        x = self.input_conv(x)
        for block in self.upsample_blocks:
            x = block(x)
        return self.conv_layers(x)

    def loss(self, x: torch.Tensor, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        """Forward and compute the loss dict against the packed targets."""
        return self.loss_by_feat(self(x), data_samples)

    def loss_by_feat(self, outputs, data_samples: Sequence) -> Dict[str, torch.Tensor]:
        raise NotImplementedError

    def apply_losses(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
                     **context) -> Dict[str, torch.Tensor]:
        """Run every configured loss; losses that share a name are summed.

        A prediction at another resolution than the target (e.g. a head that outputs half the input size) is
        bilinearly resized to the target first.
        """
        if pred.shape[-2:] != target.shape[-2:]:
            pred = F.interpolate(pred, size=target.shape[-2:], mode='bilinear', align_corners=False)
        losses: Dict[str, torch.Tensor] = {}
        for loss_module in self.losses:
            value = loss_module(pred, target, mask, **context)
            name = loss_module.loss_name
            losses[name] = losses[name] + value if name in losses else value
        return losses

    @staticmethod
    def stack_targets(data_samples: Sequence) -> Tuple[torch.Tensor, torch.Tensor]:
        """Stack ``gt_dense.data`` (C, H, W) and ``gt_dense.mask`` (1, H, W) of a batch."""
        if not all('gt_dense' in sample for sample in data_samples):
            raise KeyError('a training sample has no gt_dense: the pipeline must load the annotations (e.g. '
                           'LoadNormalAnnotations) before PackDenseInputs')
        target = torch.stack([sample.gt_dense.data for sample in data_samples]).float()
        mask = torch.stack([sample.gt_dense.mask for sample in data_samples]).bool()
        return target, mask

    def postprocess(self, outputs) -> Dict[str, torch.Tensor]:
        """Map raw outputs to per-batch predictions at the network resolution; ``'map'`` (B, C, H, W) is the dense
        one, other entries (e.g. a scale (B, 1)) are per-sample extras."""
        return dict(map=outputs)

    def postprocess_sample(self, prediction: dict) -> dict:
        """Finish one sample's prediction at its original size (``pred_dense`` plus extras); identity here."""
        return prediction

    def predict(self, x: torch.Tensor, data_samples: Sequence) -> List[dict]:
        """Predict and map each dense output back to its original image: the letterbox padding (``letterbox_pad``
        metainfo, in input pixels) is cropped off and the map resized to ``ori_shape``.

        This is the only place where predictions are mapped back and post-processed; evaluation and inference
        (``sapiens2.apis``) both go through it. Returns one dict per sample: ``pred_dense`` (PixelData) plus the
        head's extras, after :meth:`postprocess_sample`.
        """
        outputs = self.postprocess(self(x))
        results = []
        for i, sample in enumerate(data_samples):
            meta = sample.metainfo
            dense = outputs['map'][i].float()  # fp32 under autocast too: the resize to the image is not a network op
            if 'ori_shape' in meta:
                dense = unletterbox(dense, meta.get('letterbox_pad', (0, 0, 0, 0)), meta['ori_shape'],
                                    input_shape=meta.get('img_shape'))
            result = dict(pred_dense=PixelData(data=dense))
            result.update({key: value[i] for key, value in outputs.items() if key != 'map'})
            results.append(self.postprocess_sample(result))
        return results
