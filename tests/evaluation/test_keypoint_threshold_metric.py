"""KeypointThresholdMetric: constructed people whose right and wrong keypoints carry known scores."""
from pathlib import Path

import numpy as np
import pytest
from mmengine.config import Config
from mmpose.registry import METRICS

import sapiens2.evaluation  # noqa: F401  (registers the metric)

REPO = Path(__file__).resolve().parents[2]
BOX = np.array([[0.0, 0.0, 100.0, 200.0]])  # longer side 200: right within 20 px at pck_thr 0.1


def sample(scores, offsets, visible=None):
    """One person of len(scores) keypoints, each predicted ``offsets`` px to the right of the truth."""
    truth = np.stack([np.linspace(10, 90, len(scores)), np.full(len(scores), 50.0)], axis=-1)[None]
    pred = truth + np.stack([np.asarray(offsets, float), np.zeros(len(scores))], axis=-1)[None]
    visible = np.ones((1, len(scores))) if visible is None else np.asarray(visible, float)[None]
    return dict(gt_instances=dict(keypoints=truth, keypoints_visible=visible, bboxes=BOX),
                pred_instances=dict(keypoints=pred, keypoint_scores=np.asarray(scores, float)[None]))


def evaluate(metric, samples):
    metric.process([], samples)
    return metric.compute_metrics(metric.results)


def test_drawn_right_and_added_right_per_threshold():
    metric = METRICS.build(dict(type='KeypointThresholdMetric', thresholds=(0.1, 0.3), pck_thr=0.1))
    # scores 0.5, 0.4 right; 0.35 wrong; 0.2 right, 0.15 and 0.12 wrong; 0.05 (never drawn) right; last unlabelled
    result = evaluate(metric, [sample([0.5, 0.4, 0.35, 0.2, 0.15, 0.12, 0.05, 0.9],
                                      [0, 5, 50, 19, 30, 25, 0, 80], visible=[1, 1, 1, 1, 1, 1, 1, 0])])
    assert result['all/drawn@0.3'] == pytest.approx(3 / 7) and result['all/right@0.3'] == pytest.approx(2 / 3)
    assert result['all/drawn@0.1'] == pytest.approx(6 / 7) and result['all/right@0.1'] == pytest.approx(3 / 6)
    assert result['all/added_right@0.1'] == pytest.approx(1 / 3)  # 0.1 <= score < 0.3: one of three right
    assert result['all/added_right@0.3'] == result['all/right@0.3']  # the top band is everything drawn


def test_partitions_and_keypoints_visible_of_three_dimensions():
    metric = METRICS.build(dict(type='KeypointThresholdMetric', thresholds=(0.3, ),
                                partitions=dict(body=[0, 1], face=[2, 3])))
    person = sample([0.9, 0.8, 0.9, 0.1], [0, 100, 0, 0])
    person['gt_instances']['keypoints_visible'] = np.ones((1, 4, 1))
    result = evaluate(metric, [person, sample([0.9, 0.2, 0.5, 0.5], [0, 0, 0, 0])])
    assert result['body/drawn@0.3'] == pytest.approx(3 / 4) and result['body/right@0.3'] == pytest.approx(2 / 3)
    assert result['face/drawn@0.3'] == pytest.approx(3 / 4) and result['face/right@0.3'] == 1.0
    assert not any(key.startswith('all/') for key in result)


def test_nothing_to_count_is_nan_not_zero():
    metric = METRICS.build(dict(type='KeypointThresholdMetric', thresholds=(0.3, 0.5),
                                partitions=dict(body=[0, 1], hands=[2])))
    result = evaluate(metric, [sample([0.9, 0.4, 0.9], [0, 0, 0], visible=[1, 1, 0])])  # no hand labelled
    assert all(np.isnan(result[f'hands/{key}@0.3']) for key in ('drawn', 'right', 'added_right'))
    assert result['body/drawn@0.3'] == 1.0 and result['body/added_right@0.3'] == 1.0  # the 0.4 one, right
    assert result['body/drawn@0.5'] == 0.5 and result['body/right@0.5'] == 1.0
    assert np.isnan(METRICS.build(dict(type='KeypointThresholdMetric', thresholds=(0.95, )))
                    .compute_metrics([dict(scores=np.array([[0.5]]), right=np.array([[True]]),
                                           labelled=np.array([[True]]))])['all/right@0.95'])  # none drawn


def test_partition_indices_beyond_the_model_are_one_clear_error():
    metric = METRICS.build(dict(type='KeypointThresholdMetric', partitions=dict(body=[0, 7])))
    with pytest.raises(ValueError, match=r'partition indices \[7\] are not keypoints of this 3-keypoint model'):
        metric.process([], [sample([0.9, 0.9, 0.9], [0, 0, 0])])


@pytest.mark.parametrize('kwargs, message', [(dict(thresholds=(0.3, 0.1)), 'increasing'),
                                             (dict(thresholds=()), 'increasing'),
                                             (dict(pck_thr=0), 'positive')])
def test_bad_arguments_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        METRICS.build(dict(type='KeypointThresholdMetric', **kwargs))


def test_the_docs_config_builds_the_metric_on_the_body_keypoints(tmp_path):
    """The config of docs/pose.md ("Choosing a keypoint threshold"), beside the demo model's config."""
    config = tmp_path / 'thresholds.py'
    config.write_text(f"_base_ = ['{REPO}/configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py']\n"
                      "test_evaluator = [dict(type='KeypointThresholdMetric',\n"
                      "                       partitions=dict(body={{_base_.keypoint_partitions.body}}))]\n")
    cfg = Config.fromfile(str(config))
    (metric, ) = [METRICS.build(item) for item in cfg.test_evaluator]
    assert metric.partitions == dict(body=list(cfg.keypoint_partitions['body'])) and metric.pck_thr == 0.1
    assert len(metric.partitions['body']) == 17
