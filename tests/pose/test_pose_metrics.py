"""The pose config's evaluator (CocoMetric 308, per-part KeypointPartitionMetric, PCK@0.05) on a hand-made case."""
from pathlib import Path

import numpy as np
import pytest
from mmengine.config import Config
from mmengine.evaluator import Evaluator
from mmengine.registry import init_default_scope
from mmpose.datasets.datasets.utils import parse_pose_metainfo

from sapiens2.datasets.pose import keypoints308_metainfo, keypoints308_partitions

CONFIG = Path(__file__).resolve().parents[2] / 'configs' / 'pose' / 'sapiens2_0.4b_pose_goliath-1024x768.py'


def sample(i: int, shift: np.ndarray, score: float) -> dict:
    """One person in its own 300x200 image; predictions = ground truth + shift (per keypoint)."""
    rng = np.random.default_rng(i)
    gt = np.stack([rng.uniform(50, 150, 308), rng.uniform(50, 250, 308)], axis=1)
    bbox = [40.0, 40.0, 120.0, 220.0]  # xywh
    raw = dict(id=i, image_id=i, category_id=1, bbox=bbox, iscrowd=0, area=bbox[2] * bbox[3] * 0.53,
               num_keypoints=308, keypoints=np.concatenate([gt, np.full((308, 1), 2.0)], 1).reshape(-1).tolist())
    return dict(
        id=i, img_id=i, category_id=1, ori_shape=(300, 200), raw_ann_info=raw,
        pred_instances=dict(keypoints=(gt + shift)[None], keypoint_scores=np.full((1, 308), score)),
        gt_instances=dict(keypoints=gt[None], keypoints_visible=np.ones((1, 308)),
                          bboxes=np.array([[40., 40., 160., 260.]]), bbox_scores=np.ones(1),
                          bbox_scales=np.array([[150., 275.]])))


def test_config_evaluator_on_known_case(tmp_path):
    init_default_scope('mmpose')
    cfg = Config.fromfile(str(CONFIG))
    evaluator = Evaluator([m.to_dict() for m in cfg.val_evaluator])
    meta = parse_pose_metainfo(keypoints308_metainfo())
    meta['CLASSES'] = [dict(id=1, name='person')]
    evaluator.dataset_meta = meta

    face = np.zeros((308, 2))
    face[keypoints308_partitions()['face']] = 60.0
    far = np.full((308, 2), 60.0)
    # two perfect people, one with a wrong face (most of the 308 points), one entirely wrong
    samples = [sample(0, 0 * far, 1.0), sample(1, 0 * far, 1.0), sample(2, face, 0.8), sample(3, far, 0.5)]
    evaluator.process(samples)
    res = evaluator.evaluate(len(samples))

    # TP, TP, FP, FP over 4 people: precision 1 up to recall 0.5 -> 51 of COCO's 101 recall points.
    assert res['coco/AP'] == pytest.approx(51 / 101, abs=1e-3)
    assert res['face/coco/AP'] == pytest.approx(51 / 101, abs=1e-3)
    # The wrong-face person is right for body, feet and hands: TP, TP, TP, FP.
    for part in ('body', 'foot', 'left_hand', 'right_hand'):
        assert res[f'{part}/coco/AP'] == pytest.approx(76 / 101, abs=1e-3), part
    # PCK@0.05 of the 220-px box (11 px): 2 x 308 + 70 correct of 4 x 308.
    assert res['PCK'] == pytest.approx((2 * 308 + 70) / (4 * 308), abs=1e-6)
