"""The standard alpha-matting errors (SAD, MSE, gradient, connectivity) and the foreground MSE.

Definitions follow the alpha matting benchmark of Rhemann et al. (CVPR 2009) as the matting literature reports them:
SAD, gradient and connectivity errors are sums over the region divided by 1000; MSE is the mean over the region.
Every function takes (H, W) float arrays in [0, 1] and a bool region of the same size.
"""
import math
from typing import Dict, List, Sequence, Tuple

import cv2
import numpy as np
from mmengine.evaluator import BaseMetric

from sapiens2.registry import METRICS

from ..matting_channels import split_prediction, split_target, unknown_region

GRADIENT_SIGMA = 1.4
CONNECTIVITY_STEP = 0.1
CONNECTIVITY_MIN_DISTANCE = 0.15


def sad(pred: np.ndarray, target: np.ndarray, region: np.ndarray) -> float:
    """Sum of absolute differences / 1000."""
    return float(np.abs(pred - target)[region].sum() / 1000)


def mse(pred: np.ndarray, target: np.ndarray, region: np.ndarray) -> float:
    """Mean squared difference over the region (0 for an empty region)."""
    return float(((pred - target)**2)[region].mean()) if region.any() else 0.0


def gaussian_gradient_filters(sigma: float = GRADIENT_SIGMA) -> Tuple[np.ndarray, np.ndarray]:
    """The x and y first-derivative-of-Gaussian filters, each scaled to unit L2 norm; the half size is where the
    Gaussian falls below 1 % of its peak density."""
    half = math.ceil(sigma * math.sqrt(-2 * math.log(math.sqrt(2 * math.pi) * sigma * 1e-2)))
    u = np.arange(-half, half + 1, dtype=np.float64)
    gauss = np.exp(-u**2 / (2 * sigma**2)) / (sigma * math.sqrt(2 * math.pi))
    filter_x = gauss[:, None] * (-u / sigma**2 * gauss)[None, :]
    filter_x /= np.sqrt((filter_x**2).sum())
    return filter_x, filter_x.T.copy()


def gradient_magnitude(alpha: np.ndarray, sigma: float = GRADIENT_SIGMA) -> np.ndarray:
    """Gaussian-derivative gradient magnitude, edge pixels replicated beyond the border."""
    filter_x, filter_y = gaussian_gradient_filters(sigma)
    alpha = alpha.astype(np.float64)
    gx = cv2.filter2D(alpha, -1, filter_x, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.filter2D(alpha, -1, filter_y, borderType=cv2.BORDER_REPLICATE)
    return np.sqrt(gx**2 + gy**2)


def gradient_error(pred: np.ndarray, target: np.ndarray, region: np.ndarray) -> float:
    """sum over the region of (|grad pred| - |grad target|)^2 / 1000."""
    return float(((gradient_magnitude(pred) - gradient_magnitude(target))**2)[region].sum() / 1000)


def largest_component(binary: np.ndarray) -> np.ndarray:
    """The largest 4-connected component of a bool map (all False when it is empty)."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary.astype(np.uint8), connectivity=4)
    if count <= 1:
        return np.zeros_like(binary, bool)
    return labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))


def connectivity_error(pred: np.ndarray, target: np.ndarray, region: np.ndarray,
                       step: float = CONNECTIVITY_STEP) -> float:
    """Connectivity error / 1000.

    For thresholds t = step, 2 step, ..., 1, a pixel stays connected while it lies in the largest 4-connected
    component of (pred >= t) & (target >= t); l is the last threshold before it disconnects (1 if never). With
    d = alpha - l, phi = 1 - d where d >= 0.15 (else 1), and the error is sum |phi_pred - phi_target| over the region.
    """
    steps = int(round(1 / step))
    level = np.full(pred.shape, -1.0)
    for i in range(1, steps + 1):
        threshold = i / steps
        connected = largest_component((pred >= threshold) & (target >= threshold))
        newly = (level == -1) & ~connected
        level[newly] = (i - 1) / steps
    level[level == -1] = 1.0

    def phi(alpha):
        distance = alpha - level
        return 1 - distance * (distance >= CONNECTIVITY_MIN_DISTANCE)

    return float(np.abs(phi(pred) - phi(target))[region].sum() / 1000)


ALPHA_ERRORS = dict(sad=sad, mse=mse, grad=gradient_error, conn=connectivity_error)


@METRICS.register_module()
class MattingMetric(BaseMetric):
    """SAD, MSE, gradient and connectivity errors of alpha over the whole image (``sad``, ``mse``, ``grad``,
    ``conn``) and over the trimap's unknown region (``*_unknown``), and ``fg_mse``: the MSE of the pre-multiplied
    RGB foreground over pixels with ground-truth alpha > 0 (samples with a foreground only).

    Predictions arrive at the original image size with the letterbox padding removed and are compared with the
    ground truth at that size (``FormatMattingTarget`` in the validation pipeline, after ``Letterbox(test_mode)``).
    Each error is computed per image and averaged over the images (the unknown-region ones over images that have
    unknown pixels).
    """

    default_prefix = 'matting'

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            pred = split_prediction(sample['pred_dense']['data'].detach().float().cpu())
            gt = split_target(sample['gt_dense']['data'].float().cpu())
            valid = sample['gt_dense']['mask'][0].bool().cpu().numpy()
            alpha_p, alpha_g = pred.alpha[0].numpy().astype(np.float64), gt.alpha[0].numpy().astype(np.float64)
            unknown = valid & unknown_region(gt.trimap[0]).numpy()
            result = {name: error(alpha_p, alpha_g, valid) for name, error in ALPHA_ERRORS.items()}
            if unknown.any():
                result.update({f'{name}_unknown': error(alpha_p, alpha_g, unknown)
                               for name, error in ALPHA_ERRORS.items()})
            foreground = gt.foreground.numpy()
            fg_region = valid & (alpha_g > 0) & np.isfinite(foreground).all(0)
            if fg_region.any():
                result['fg_mse'] = float(((pred.foreground.numpy() - foreground)**2)[:, fg_region].mean())
            self.results.append(result)

    def compute_metrics(self, results: List[Dict[str, float]]) -> Dict[str, float]:
        names = list(ALPHA_ERRORS) + [f'{name}_unknown' for name in ALPHA_ERRORS] + ['fg_mse']
        metrics = {}
        for name in names:
            values = [r[name] for r in results if name in r]
            if values:
                metrics[name] = float(np.mean(values))
        return metrics
