"""Angular error of predicted surface normals (the official ``NormalEvaluator``)."""
from functools import reduce
from typing import Dict, List, Sequence

from mmengine.evaluator import BaseMetric

from sapiens2.evaluation.angle_error_stats import AngleErrorStats, angle_error_deg
from sapiens2.registry import METRICS


@METRICS.register_module()
class NormalMetric(BaseMetric):
    """Mean / median / RMSE angle (degrees) and % of valid pixels within 5, 11.25, 22.5 and 30 degrees.

    Predictions arrive at the original image size with the letterbox padding removed (the original compared the
    padded prediction; see docs/differences.md), and are compared with the ground truth at that size over its mask.
    """

    default_prefix = 'normal'

    def process(self, data_batch: dict, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            mask = sample['gt_dense']['mask'][0].bool().cpu()
            pred = sample['pred_dense']['data'].float().cpu()[:, mask]
            target = sample['gt_dense']['data'].float().cpu()[:, mask]
            stats = AngleErrorStats()
            stats.update(angle_error_deg(pred, target))
            self.results.append(stats)

    def compute_metrics(self, results: List[AngleErrorStats]) -> Dict[str, float]:
        return reduce(AngleErrorStats.merge, results, AngleErrorStats()).summary()
