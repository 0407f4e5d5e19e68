"""Albedo errors over valid pixels (the official albedo evaluator)."""
import math
from functools import reduce
from typing import Dict, List, Sequence

import torch
import torch.nn.functional as F
from mmengine.evaluator import BaseMetric

from sapiens2.models.losses.masked import forward_differences
from sapiens2.registry import METRICS


def gaussian_kernel_1d(size: int = 11, sigma: float = 1.5) -> torch.Tensor:
    """Normalised 1-D Gaussian of ``size`` taps."""
    coords = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    kernel = torch.exp(-coords**2 / (2 * sigma**2))
    return kernel / kernel.sum()


def gaussian_blur(maps: torch.Tensor, size: int = 11, sigma: float = 1.5) -> torch.Tensor:
    """Separable zero-padded Gaussian blur of every channel of ``maps`` (N, H, W)."""
    kernel = gaussian_kernel_1d(size, sigma).to(maps)
    x = maps[:, None]
    x = F.conv2d(x, kernel.view(1, 1, 1, size), padding=(0, size // 2))
    return F.conv2d(x, kernel.view(1, 1, size, 1), padding=(size // 2, 0))[:, 0]


def masked_ssim_sums(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
                     data_range: float) -> tuple:
    """Sum and count of the channel-averaged SSIM over windows whose blurred mask support is above 0.5.

    Local statistics are mask-weighted and normalised by the blurred mask (11x11 Gaussian, sigma 1.5).
    """
    c1, c2 = (0.01 * data_range)**2, (0.03 * data_range)**2
    m = mask.to(pred)[None]
    x, y = pred, target
    blurred = gaussian_blur(torch.cat([m, m * x, m * y, m * x * x, m * y * y, m * x * y]))
    channels = x.shape[0]
    support, moments = blurred[0], blurred[1:].view(5, channels, *x.shape[1:])
    norm = support.clamp(min=1e-6)
    mu_x, mu_y = moments[0] / norm, moments[1] / norm
    var_x = moments[2] / norm - mu_x**2
    var_y = moments[3] / norm - mu_y**2
    cov = moments[4] / norm - mu_x * mu_y
    ssim = ((2 * mu_x * mu_y + c1) * (2 * cov + c2)) / ((mu_x**2 + mu_y**2 + c1) * (var_x + var_y + c2))
    counted = support > 0.5
    return ssim.mean(0)[counted].sum().item(), int(counted.sum())


class AlbedoErrorSums:
    """Sums of the albedo errors of a set of samples (merged across samples and ranks)."""

    KEYS = ('abs', 'sq', 'pixels', 'ssim', 'ssim_windows', 'grad', 'grad_pairs')

    def __init__(self) -> None:
        self.sums = dict.fromkeys(self.KEYS, 0.0)

    def update(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, data_range: float) -> None:
        error = (pred - target)[:, mask].double()
        self.sums['abs'] += error.abs().mean(0).sum().item()
        self.sums['sq'] += (error**2).mean(0).sum().item()
        self.sums['pixels'] += error.shape[1]
        ssim, windows = masked_ssim_sums(pred, target, mask, data_range)
        self.sums['ssim'] += ssim
        self.sums['ssim_windows'] += windows
        dpx, mask_x, dpy, mask_y = forward_differences(pred[None], mask[None, None])
        dgx, _, dgy, _ = forward_differences(target[None], mask[None, None])
        for dp, dg, pairs in ((dpx, dgx, mask_x), (dpy, dgy, mask_y)):
            self.sums['grad'] += ((dp - dg).abs() * pairs).sum().item()
            self.sums['grad_pairs'] += pairs.sum().item() * pred.shape[0]

    def merge(self, other: 'AlbedoErrorSums') -> 'AlbedoErrorSums':
        self.sums = {key: value + other.sums[key] for key, value in self.sums.items()}
        return self

    def summary(self, data_range: float) -> Dict[str, float]:
        pixels = self.sums['pixels']
        if pixels == 0:
            raise ValueError('No valid pixels were evaluated; check the masks of the evaluation set.')
        mse = self.sums['sq'] / pixels
        return dict(
            mae=self.sums['abs'] / pixels,
            rmse=math.sqrt(mse),
            psnr=10 * math.log10(data_range**2 / max(mse, 1e-12)),
            ssim=self.sums['ssim'] / max(self.sums['ssim_windows'], 1),
            grad_l1=self.sums['grad'] / max(self.sums['grad_pairs'], 1))


@METRICS.register_module()
class AlbedoMetric(BaseMetric):
    """MAE, RMSE (per-pixel channel means), PSNR, masked SSIM and gradient L1 of RGB albedo in [0, 1].

    The prediction arrives at the original size with the letterbox padding removed (the original compared the
    padded prediction; see docs/differences.md).

    Args:
        data_range: Value range R of the albedo for PSNR and SSIM (1 for [0, 1] maps).
    """

    default_prefix = 'albedo'

    def __init__(self, data_range: float = 1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data_range = data_range

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            sums = AlbedoErrorSums()
            sums.update(sample['pred_dense']['data'].float().cpu(), sample['gt_dense']['data'].float().cpu(),
                        sample['gt_dense']['mask'][0].bool().cpu(), self.data_range)
            self.results.append(sums)

    def compute_metrics(self, results: List[AlbedoErrorSums]) -> Dict[str, float]:
        return reduce(AlbedoErrorSums.merge, results, AlbedoErrorSums()).summary(self.data_range)
