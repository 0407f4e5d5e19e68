"""How a pose model's keypoint scores separate right from wrong keypoints: the data for choosing ``--kpt-thr``."""
from typing import Dict, List, Optional, Sequence

import numpy as np
from mmengine.evaluator import BaseMetric
from mmengine.logging import MMLogger
from mmpose.registry import METRICS


@METRICS.register_module()
class KeypointThresholdMetric(BaseMetric):
    """Per score threshold, the share of the labelled keypoints a picture would draw and how many of them are right.

    A keypoint is *drawn* at threshold ``t`` when its score is at least ``t`` (what ``sapiens2-infer --kpt-thr t``
    draws) and *right* when it lies closer than ``pck_thr`` times the ground-truth box's longer side to the truth
    (PCK with mmpose's ``norm_item='bbox'``). For each threshold and each partition it reports ``drawn@t``
    (drawn / labelled), ``right@t`` (right / drawn) and ``added_right@t`` (right among the keypoints scored from ``t``
    up to the next higher threshold, all above it for the highest: whether lowering the threshold to ``t`` adds right
    keypoints or wrong ones); NaN where there is nothing to count.

    Args:
        thresholds: The score thresholds, in increasing order.
        pck_thr: The distance, as a share of the box's longer side, within which a keypoint is right.
        partitions: Keypoint indices per part (e.g. the configs' ``keypoint_partitions``); default all keypoints as
            ``all``.
        collect_device, prefix: ``BaseMetric``'s.
    """

    def __init__(self,
                 thresholds: Sequence[float] = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
                 pck_thr: float = 0.1,
                 partitions: Optional[Dict[str, Sequence[int]]] = None,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        thresholds = [float(t) for t in thresholds]
        if not thresholds or thresholds != sorted(set(thresholds)):
            raise ValueError(f'thresholds must be increasing and distinct, got {thresholds}')
        if pck_thr <= 0:
            raise ValueError(f'pck_thr is a share of the box side and must be positive, got {pck_thr}')
        self.thresholds, self.pck_thr = thresholds, float(pck_thr)
        self.partitions = {name: list(indices) for name, indices in (partitions or {}).items()}

    def process(self, data_batch: Sequence[dict], data_samples: Sequence[dict]) -> None:
        """Keep each person's keypoint scores, which keypoints are right and which are labelled."""
        for sample in data_samples:
            gt = sample['gt_instances']
            pred = sample['pred_instances']
            visible = np.asarray(gt['keypoints_visible'], dtype=float)
            labelled = (visible[..., 0] if visible.ndim == 3 else visible) > 0  # (N, K)
            if not self.results:  # the first sample of an evaluation
                self._check_partitions(labelled.shape[1])
            box = np.asarray(gt['bboxes'], dtype=float)  # (N, 4) x1 y1 x2 y2
            side = np.maximum(box[:, 2] - box[:, 0], box[:, 3] - box[:, 1])[:, None]  # (N, 1)
            distance = np.linalg.norm(np.asarray(pred['keypoints'])[..., :2] - np.asarray(gt['keypoints'])[..., :2],
                                      axis=-1)  # (N, K)
            self.results.append(dict(scores=np.asarray(pred['keypoint_scores'], dtype=float),
                                     right=distance < self.pck_thr * side, labelled=labelled))

    def _check_partitions(self, num_keypoints: int) -> None:
        unknown = sorted({i for part in self.partitions.values() for i in part if not 0 <= i < num_keypoints})
        if unknown:
            raise ValueError(f'{type(self).__name__}: partition indices {unknown} are not keypoints of this '
                             f'{num_keypoints}-keypoint model; fix `partitions` in the config')

    def compute_metrics(self, results: List[dict]) -> Dict[str, float]:
        """The shares per part and threshold (NaN where nothing is counted), and the table in the log."""
        if not results:  # BaseMetric has warned
            return {}
        scores = np.concatenate([r['scores'] for r in results])  # (people, K)
        right = np.concatenate([r['right'] for r in results])
        labelled = np.concatenate([r['labelled'] for r in results])
        partitions = self.partitions or {'all': list(range(scores.shape[1]))}
        metrics, lines = {}, []
        for part, indices in partitions.items():
            mask = labelled[:, indices]
            part_scores, part_right = scores[:, indices][mask], right[:, indices][mask]
            for low, high in zip(self.thresholds, self.thresholds[1:] + [np.inf]):
                drawn, band = part_scores >= low, (part_scores >= low) & (part_scores < high)
                values = {'drawn': share(drawn), 'right': share(part_right[drawn]),
                          'added_right': share(part_right[band])}
                metrics.update({f'{part}/{key}@{low:g}': value for key, value in values.items()})
                lines.append(f'{part:>10s} {low:9.2f} {values["drawn"]:7.3f} {values["right"]:7.3f} '
                             f'{values["added_right"]:11.3f} {mask.sum():9d} {drawn.sum():7d} {band.sum():7d}')
        MMLogger.get_current_instance().info(
            f'keypoints right (closer than {self.pck_thr:g} x the box side), by score threshold (added right: among '
            'those scored from this threshold to the next):\n'
            f'{"part":>10s} {"threshold":>9s} {"drawn":>7s} {"right":>7s} {"added right":>11s} {"labelled":>9s} '
            f'{"n drawn":>7s} {"n added":>7s}\n' + '\n'.join(lines))
        return metrics


def share(flags: np.ndarray) -> float:
    """The share of true flags; NaN for none (nothing to count is not a share of 0)."""
    return float(flags.mean()) if flags.size else float('nan')
