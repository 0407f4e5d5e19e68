import math

import pytest
import torch

from sapiens2.evaluation.angle_error_stats import AngleErrorStats, angle_error_deg


def test_angle_error_of_known_vectors():
    pred = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    target = torch.tensor([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
    torch.testing.assert_close(angle_error_deg(pred, target), torch.tensor([0.0, 45.0]))


def test_stats_mean_median_rmse_and_thresholds_merge():
    a, b = AngleErrorStats(), AngleErrorStats()
    a.update(torch.tensor([1.0, 10.0]))
    b.update(torch.tensor([20.0, 40.0]))
    stats = a.merge(b).summary()
    assert stats['mean_angle'] == pytest.approx(17.75)
    assert stats['rmse_angle'] == pytest.approx(math.sqrt((1 + 100 + 400 + 1600) / 4))
    assert stats['median_angle'] == pytest.approx(10.25)
    assert stats['within_5_0_deg'] == 25.0 and stats['within_11_25_deg'] == 50.0
    assert stats['within_22_5_deg'] == 75.0 and stats['within_30_0_deg'] == 75.0


def test_empty_stats_raise():
    with pytest.raises(ValueError, match='No valid pixels'):
        AngleErrorStats().summary()
