"""Pointmap errors in canonical space (the official ``PointmapEvaluator``)."""
from functools import reduce
from typing import Dict, List, Sequence

import torch
import torch.nn.functional as F
from mmengine.evaluator import BaseMetric

from sapiens2.evaluation.angle_error_stats import AngleErrorStats, angle_error_deg
from sapiens2.registry import METRICS

DISTANCE_THRESHOLDS = (0.05, 0.10, 0.20)
# Depth accuracy threshold of the usual delta < 1.25 score: max(z / z_gt, z_gt / z) < 1.25.
DELTA_THRESHOLD = 1.25


def sobel_kernels_5x5() -> torch.Tensor:
    """(2, 1, 5, 5) Sobel kernels for d/dx and d/dy (smoothing [1, 4, 6, 4, 1] x derivative [-1, -2, 0, 2, 1])."""
    smooth = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0])
    derive = torch.tensor([-1.0, -2.0, 0.0, 2.0, 1.0])
    ddx = smooth[:, None] * derive[None, :]
    return torch.stack([ddx, ddx.t()])[:, None]


def sobel_normals(points: torch.Tensor) -> torch.Tensor:
    """Normals (3, H, W) of a (3, H, W) pointmap: cross product of its 5x5 Sobel x and y gradients."""
    grads = F.conv2d(F.pad(points[:, None], (2, 2, 2, 2), mode='replicate'), sobel_kernels_5x5().to(points))
    return torch.cross(grads[:, 0], grads[:, 1], dim=0)


class PointmapErrorSums:
    """Sums of the per-pixel pointmap errors of a set of samples (merged across samples and ranks)."""

    def __init__(self) -> None:
        self.count = 0
        self.sums = dict(l2=0.0, sq=0.0, x=0.0, y=0.0, z=0.0, abs_rel=0.0, abs_rel_scaled=0.0)
        self.within = [0] * len(DISTANCE_THRESHOLDS)
        self.delta_hits = 0
        self.angles = AngleErrorStats()

    def update(self, pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> None:
        error = (pred - target)[:, mask].double()
        distance = error.norm(dim=0)
        self.count += distance.numel()
        self.sums['l2'] += distance.sum().item()
        self.sums['sq'] += (distance**2).sum().item()
        for axis, name in enumerate('xyz'):
            self.sums[name] += error[axis].abs().sum().item()
        for i, threshold in enumerate(DISTANCE_THRESHOLDS):
            self.within[i] += int((distance < threshold).sum())
        depth_pred, depth_gt = pred[2][mask].double(), target[2][mask].double()
        self.sums['abs_rel'] += ((depth_pred - depth_gt).abs() / depth_gt).sum().item()
        positive = depth_pred[depth_pred > 0]
        scale = (depth_gt.median() / positive.median()).item() if positive.numel() else 0.0
        self.sums['abs_rel_scaled'] += ((depth_pred * scale - depth_gt).abs() / depth_gt).sum().item()
        ratio = torch.maximum(depth_pred / depth_gt, depth_gt / depth_pred.clamp(min=1e-12))
        self.delta_hits += int(((depth_pred > 0) & (ratio < DELTA_THRESHOLD)).sum())
        normal_pred, normal_gt = sobel_normals(pred), sobel_normals(target)
        valid = mask & (normal_gt.norm(dim=0) > 1e-6)
        self.angles.update(angle_error_deg(normal_pred[:, valid], normal_gt[:, valid]))

    def merge(self, other: 'PointmapErrorSums') -> 'PointmapErrorSums':
        self.count += other.count
        self.sums = {key: value + other.sums[key] for key, value in self.sums.items()}
        self.within = [a + b for a, b in zip(self.within, other.within)]
        self.delta_hits += other.delta_hits
        self.angles.merge(other.angles)
        return self

    def summary(self) -> Dict[str, float]:
        if self.count == 0:
            raise ValueError('No valid pixels were evaluated; check the masks of the evaluation set.')
        results = dict(
            l2_mean=self.sums['l2'] / self.count,
            rmse=(self.sums['sq'] / self.count)**0.5,
            x_mae=self.sums['x'] / self.count,
            y_mae=self.sums['y'] / self.count,
            z_mae=self.sums['z'] / self.count,
            abs_rel=self.sums['abs_rel'] / self.count,
            abs_rel_scaled=self.sums['abs_rel_scaled'] / self.count,
            delta_1=100.0 * self.delta_hits / self.count)
        for threshold, hits in zip(DISTANCE_THRESHOLDS, self.within):
            results[f'within_{round(threshold * 100):02d}_cm'] = 100.0 * hits / self.count
        results.update(self.angles.summary(prefix='normal_'))
        return results


@METRICS.register_module()
class PointmapMetric(BaseMetric):
    """L2 mean, RMSE, per-axis MAE, % within 5/10/20 cm, depth AbsRel (mean |z - z_gt| / z_gt; ``abs_rel_scaled``
    after scaling each image's depth by median(z_gt) / median(z)), delta_1 (% of pixels with
    max(z / z_gt, z_gt / z) < 1.25), and angle stats of Sobel normals, in canonical space.

    The prediction (canonical, not rescaled) arrives at the original size with the letterbox padding removed and is
    compared with the canonical GT at that size over its mask.
    """

    default_prefix = 'pointmap'

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            sums = PointmapErrorSums()
            sums.update(sample['pred_dense']['data'].float().cpu(), sample['gt_dense']['data'].float().cpu(),
                        sample['gt_dense']['mask'][0].bool().cpu())
            self.results.append(sums)

    def compute_metrics(self, results: List[PointmapErrorSums]) -> Dict[str, float]:
        return reduce(PointmapErrorSums.merge, results, PointmapErrorSums()).summary()
