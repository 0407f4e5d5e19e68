"""Streaming statistics of per-pixel angular errors, shared by the normal and pointmap metrics."""
from typing import Dict, Sequence

import torch
import torch.nn.functional as F

ANGLE_THRESHOLDS = (5.0, 11.25, 22.5, 30.0)
HISTOGRAM_BIN_DEG = 0.5


def angle_error_deg(pred: torch.Tensor, target: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """Angle in degrees between the L2-normalised (eps 1e-6) vectors of ``pred`` and ``target`` along ``dim``."""
    cosine = (F.normalize(pred, dim=dim, eps=1e-6) * F.normalize(target, dim=dim, eps=1e-6)).sum(dim)
    return torch.rad2deg(torch.arccos(cosine.clamp(-1.0, 1.0)))


def threshold_name(threshold: float) -> str:
    """5.0 -> 'within_5_0_deg', 11.25 -> 'within_11_25_deg'."""
    return 'within_' + f'{threshold:g}'.replace('.', '_') + ('_0' if float(threshold).is_integer() else '') + '_deg'


class AngleErrorStats:
    """Accumulates angular errors (degrees) and reports mean, median, RMSE and % under each threshold.

    The median is the centre of the 0.5 degree histogram bin that holds the global median, so the state stays small.
    """

    def __init__(self, thresholds: Sequence[float] = ANGLE_THRESHOLDS) -> None:
        self.thresholds = tuple(thresholds)
        self.count = 0
        self.total = 0.0
        self.total_sq = 0.0
        self.within = [0] * len(self.thresholds)
        self.histogram = torch.zeros(int(180 / HISTOGRAM_BIN_DEG), dtype=torch.float64)

    def update(self, angles: torch.Tensor) -> None:
        angles = angles.detach().double().flatten()
        self.count += angles.numel()
        self.total += angles.sum().item()
        self.total_sq += (angles**2).sum().item()
        for i, threshold in enumerate(self.thresholds):
            self.within[i] += int((angles < threshold).sum())
        bins = (angles / HISTOGRAM_BIN_DEG).long().clamp(0, self.histogram.numel() - 1)
        self.histogram += torch.bincount(bins, minlength=self.histogram.numel()).double()

    def merge(self, other: 'AngleErrorStats') -> 'AngleErrorStats':
        """Add ``other``'s counts into this one (e.g. per-sample stats gathered from all ranks)."""
        self.count += other.count
        self.total += other.total
        self.total_sq += other.total_sq
        self.within = [a + b for a, b in zip(self.within, other.within)]
        self.histogram += other.histogram
        return self

    def summary(self, prefix: str = '') -> Dict[str, float]:
        if self.count == 0:
            raise ValueError('No valid pixels were evaluated; check the masks of the evaluation set.')
        median_bin = int(torch.searchsorted(self.histogram.cumsum(0), torch.tensor(self.count / 2.0,
                                                                                  dtype=torch.float64)))
        results = {
            f'{prefix}mean_angle': self.total / self.count,
            f'{prefix}median_angle': (median_bin + 0.5) * HISTOGRAM_BIN_DEG,
            f'{prefix}rmse_angle': (self.total_sq / self.count)**0.5,
        }
        for threshold, hits in zip(self.thresholds, self.within):
            results[prefix + threshold_name(threshold)] = 100.0 * hits / self.count
        return results
