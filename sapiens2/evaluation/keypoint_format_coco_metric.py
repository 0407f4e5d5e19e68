"""308-keypoint predictions scored on a COCO-17 or COCO-WholeBody ground truth with the standard xtcocotools."""
import copy
from typing import Dict, List, Optional, Sequence

import numpy as np
from mmengine.fileio import load
from mmpose.datasets.datasets.utils import parse_pose_metainfo
from mmpose.evaluation.metrics import CocoMetric
from mmpose.registry import METRICS
from xtcocotools.coco import COCO
from xtcocotools.cocoeval import COCOeval

from sapiens2.structures.keypoint_formats import keypoint_format

# The standard layouts' metadata (names, sigmas) as mmpose ships it.
MMPOSE_DATASET_INFO = {'coco17': 'configs/_base_/datasets/coco.py',
                       'coco_wholebody': 'configs/_base_/datasets/coco_wholebody.py'}
# COCO-WholeBody annotation fields, in the order of the 133 points.
WHOLEBODY_FIELDS = (('keypoints', 17), ('foot_kpts', 6), ('face_kpts', 68), ('lefthand_kpts', 21),
                    ('righthand_kpts', 21))
STATS_NAMES = ('AP', 'AP .5', 'AP .75', 'AP (M)', 'AP (L)', 'AR', 'AR .5', 'AR .75', 'AR (M)', 'AR (L)')


def _coco(dataset: dict) -> COCO:
    coco = COCO()
    coco.dataset = dataset
    coco.createIndex()
    return coco


@METRICS.register_module()
class KeypointFormatCocoMetric(CocoMetric):
    """mmpose's ``CocoMetric`` for 308-keypoint predictions on a COCO-17 or COCO-WholeBody ground truth.

    Each prediction is converted to the ground truth's layout (:mod:`sapiens2.structures.keypoint_formats`); only
    the points with a 308 counterpart are evaluated (COCO-17: all 17; COCO-WholeBody: 101 of 133, the 32 face points
    listed in docs/pose.md have none), with the standard sigmas of those points. Rescoring and OKS-NMS are
    ``CocoMetric``'s, over the evaluated points. xtcocotools' ``keypoints`` evaluation then runs once on all evaluated
    points (``coco/AP``, ...) and once per part (``coco/<part>/AP``, ...; COCO-WholeBody: body, foot, face,
    left_hand, right_hand), each with its sigma subset.

    The dataset must yield the 308 layout with the ground truth's ids, e.g. ``CocoWholeBody308Dataset`` on the same
    COCO-17 or COCO-WholeBody file (so that flip test uses the 308 flip pairs).

    Args:
        ann_file: The COCO-17 or COCO-WholeBody annotation file.
        keypoint_format: ``'coco17'`` or ``'coco_wholebody'``: the layout of ``ann_file``.
        parts: Parts evaluated on their own (default: every part of the layout except for COCO-17, which has one).
        **kwargs: ``CocoMetric`` arguments (``score_mode``, ``keypoint_score_thr``, ``nms_mode``, ``nms_thr``,
            ``use_area``, ``outfile_prefix``, ``prefix``...).
    """

    def __init__(self,
                 ann_file: str,
                 keypoint_format: str = 'coco17',
                 parts: Optional[Sequence[str]] = None,
                 **kwargs) -> None:
        fmt = keypoint_format_for_metric(keypoint_format)
        for key in ('pred_converter', 'gt_converter', 'iou_type'):
            if kwargs.get(key) not in (None, 'keypoints'):
                raise ValueError(f'{type(self).__name__} converts keypoints itself; {key} is not supported.')
        kwargs.pop('iou_type', None)
        super().__init__(ann_file=None, **kwargs)
        self.format = fmt
        self.ann_file = ann_file
        self.eval_indices = np.flatnonzero(fmt.mapped)
        info = parse_pose_metainfo(dict(from_file=MMPOSE_DATASET_INFO[fmt.name]))
        names = [info['keypoint_id2name'][i] for i in range(info['num_keypoints'])]
        if names != list(fmt.keypoint_names):
            raise ValueError(f'mmpose\'s {MMPOSE_DATASET_INFO[fmt.name]} does not list the {fmt.name} names in the '
                             'expected order; this mmpose version is not supported.')
        self.sigmas = np.asarray(info['sigmas'], dtype=np.float64)[self.eval_indices]
        position = {index: i for i, index in enumerate(self.eval_indices)}
        default_parts = [] if fmt.name == 'coco17' else list(fmt.parts)
        self.part_positions: Dict[str, List[int]] = {
            part: [position[i] for i in fmt.part_indices(part, mapped_only=True)]
            for part in (default_parts if parts is None else parts)}
        self.coco = _coco(self._ground_truth(ann_file))
        self._dataset_meta = self._evaluated_meta()

    def _evaluated_meta(self, dataset_meta: Optional[dict] = None) -> dict:
        return dict(dataset_meta or {}, dataset_name=self.format.name, num_keypoints=len(self.eval_indices),
                    sigmas=self.sigmas)

    @property
    def dataset_meta(self) -> Optional[dict]:
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict) -> None:
        num = (dataset_meta or {}).get('num_keypoints')
        if num is not None and num != 308:
            raise ValueError(f'{type(self).__name__} scores 308-keypoint predictions, but the dataset has {num} '
                             'keypoints; evaluate with a 308-layout dataset (CocoWholeBody308Dataset reads COCO-17 '
                             'and COCO-WholeBody files).')
        self._dataset_meta = self._evaluated_meta(dataset_meta)

    def _ground_truth(self, ann_file: str) -> dict:
        """The annotation file with each ``keypoints`` in the evaluated layout (the mapped points only)."""
        data = load(ann_file)
        if not isinstance(data, dict) or 'annotations' not in data or 'images' not in data:
            raise ValueError(f'{ann_file} is not a COCO annotation file (needs "images" and "annotations").')
        fields = WHOLEBODY_FIELDS if self.format.name == 'coco_wholebody' else WHOLEBODY_FIELDS[:1]
        annotations = []
        for ann in data['annotations']:
            parts = []
            for field, count in fields:
                values = ann.get(field, [0.0] * 3 * count if field != 'keypoints' else None)
                if values is None or len(values) != 3 * count:
                    raise ValueError(f'{ann_file}: annotation {ann.get("id")} needs "{field}" with {3 * count} '
                                     f'values (x, y, v per point), got {None if values is None else len(values)}.')
                parts.append(np.asarray(values, dtype=np.float64).reshape(count, 3))
            keypoints = np.concatenate(parts)[self.eval_indices]
            kept = {k: v for k, v in ann.items() if k not in dict(fields)}
            annotations.append(dict(kept, keypoints=keypoints.reshape(-1).tolist(),
                                    num_keypoints=int((keypoints[:, 2] > 0).sum())))
        return dict(images=data['images'], categories=data.get('categories', [{'id': 1, 'name': 'person'}]),
                    annotations=annotations)

    def process(self, data_batch: Sequence[dict], data_samples: Sequence[dict]) -> None:
        """Convert each sample's 308 predicted keypoints to the evaluated points, then ``CocoMetric.process``."""
        converted = []
        for sample in data_samples:
            pred = sample['pred_instances']
            keypoints, scores = self.format.convert(pred['keypoints'], pred['keypoint_scores'])
            pred = dict(pred, keypoints=keypoints[:, self.eval_indices], keypoint_scores=scores[:, self.eval_indices])
            converted.append(dict(sample, pred_instances=pred))
        super().process(data_batch, converted)

    def _evaluate(self, gt: COCO, results: List[dict], sigmas: np.ndarray) -> np.ndarray:
        evaluator = COCOeval(gt, gt.loadRes(results), 'keypoints', sigmas, self.use_area)
        evaluator.params.useSegm = None
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
        return evaluator.stats

    def _do_python_keypoint_eval(self, outfile_prefix: str) -> list:
        results = load(f'{outfile_prefix}.keypoints.json')
        stats = list(zip(STATS_NAMES, self._evaluate(self.coco, copy.deepcopy(results), self.sigmas)))
        for part, positions in self.part_positions.items():
            def subset(flat: list) -> list:
                return np.asarray(flat).reshape(-1, 3)[positions].reshape(-1).tolist()

            dataset = dict(self.coco.dataset, annotations=[
                dict(ann, keypoints=subset(ann['keypoints']),
                     num_keypoints=int((np.asarray(subset(ann['keypoints']))[2::3] > 0).sum()))
                for ann in self.coco.dataset['annotations']])
            part_results = [dict(copy.deepcopy(r), keypoints=subset(r['keypoints'])) for r in results]
            part_stats = self._evaluate(_coco(dataset), part_results, self.sigmas[positions])
            stats += [(f'{part}/{name}', value) for name, value in zip(STATS_NAMES, part_stats)]
        return stats


def keypoint_format_for_metric(name: str):
    """The :class:`~sapiens2.structures.keypoint_formats.KeypointFormat` of a ground truth layout the metric reads."""
    fmt = keypoint_format(name)
    if fmt.name not in MMPOSE_DATASET_INFO:
        raise ValueError(f'KeypointFormatCocoMetric evaluates on {sorted(MMPOSE_DATASET_INFO)} ground truth, not '
                         f'{name!r}.')
    return fmt
