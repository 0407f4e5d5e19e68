"""The constant-velocity Kalman filter (causal smoothing of live input) on ground-truth tracks plus known noise."""
import numpy as np
import pytest

from sapiens2.apis.pose_video.kalman import ConstantVelocityFilter
from tests.apis.pose_video.test_smoothing import FPS, acceleration_error, walk


def filtered(noisy, make, scale=200.0):
    smoother = make()
    return np.stack([smoother(x, i / FPS, scale=scale) for i, x in enumerate(noisy)])


def test_jitter_down_3x_without_trailing_swinging_limbs():
    truth, noisy = walk()
    kalman = filtered(noisy, ConstantVelocityFilter)
    assert acceleration_error(kalman, truth) < acceleration_error(noisy, truth) / 3
    lags = [np.linalg.norm(kalman[10 + lag:] - truth[10:len(truth) - lag], axis=-1).mean() for lag in range(6)]
    assert int(np.argmin(lags)) <= 1  # closest to the truth of the same frame or the one before
    assert np.linalg.norm(kalman - truth, axis=-1)[10:].mean() < np.linalg.norm(noisy - truth, axis=-1)[10:].mean()


def test_noises_are_in_units_of_the_scale():
    truth, noisy = walk(num=30)
    near = filtered(2 * noisy, ConstantVelocityFilter, scale=400.0)
    np.testing.assert_allclose(near, 2 * filtered(noisy, ConstantVelocityFilter, scale=200.0), rtol=1e-9, atol=1e-9)


def test_a_still_point_converges_and_a_jump_is_followed():
    kalman = ConstantVelocityFilter()
    for t in range(30):
        out = kalman(np.array([[10.0, 20.0]]), t / FPS, scale=100.0)
    np.testing.assert_allclose(out, [[10.0, 20.0]])
    for t in range(30, 60):
        out = kalman(np.array([[60.0, 20.0]]), t / FPS, scale=100.0)
    assert abs(out[0, 0] - 60.0) < 1.0  # a second after a jump of half a box height


@pytest.mark.parametrize('args', [(0.0, 1e-3), (0.1, -1.0), (float('nan'), 1e-3)])
def test_bad_parameters(args):
    with pytest.raises(ValueError, match='acceleration_noise > 0 and measurement_noise > 0'):
        ConstantVelocityFilter(*args)


def test_times_must_increase():
    kalman = ConstantVelocityFilter()
    kalman(np.zeros((1, 2)), 1.0)
    with pytest.raises(ValueError, match='times must increase'):
        kalman(np.zeros((1, 2)), 1.0)
