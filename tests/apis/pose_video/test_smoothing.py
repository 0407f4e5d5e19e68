"""One-Euro filter on ground-truth tracks plus known noise: lower jitter, bounded lag."""
import numpy as np
import pytest

from sapiens2.apis.pose_video.smoothing import OneEuroFilter, two_sided

FPS = 30.0


def acceleration_error(pred: np.ndarray, truth: np.ndarray) -> float:
    """Mean norm of the difference of the frame-to-frame accelerations."""
    return float(np.linalg.norm(np.diff(pred, 2, axis=0) - np.diff(truth, 2, axis=0), axis=-1).mean())


def walk(num=90, points=20, seed=0):
    """Ground-truth tracks of points (pixels) of a person 200 px tall walking and swinging its limbs, and the same
    with Gaussian noise of 5 px (a pose model's jitter)."""
    rng = np.random.default_rng(seed)
    t = np.arange(num)[:, None] / FPS
    base = rng.uniform(0, 200, (points, 2))
    swing = 25 * np.sin(2 * np.pi * 1.0 * t + rng.uniform(0, 6, points))  # limbs at one stride per second
    truth = base[None] + np.stack([60 * t + swing, 0.3 * swing], -1)  # walking at 60 px/s
    return truth, truth + rng.normal(0, 5.0, truth.shape)


def smoothed(noisy, **kwargs):
    one_euro = OneEuroFilter(**kwargs)
    return np.stack([one_euro(x, i / FPS, scale=200.0) for i, x in enumerate(noisy)])


def test_jitter_down_at_bounded_lag():
    truth, noisy = walk()
    smooth = smoothed(noisy)
    assert acceleration_error(smooth, truth) < acceleration_error(noisy, truth) / 3
    # Bounded lag: the smoothed track is closest to the truth of at most 2 frames before, and its error stays below
    # the noise's (5 px sigma).
    lags = [np.linalg.norm(smooth[10 + lag:] - truth[10:len(truth) - lag], axis=-1).mean() for lag in range(6)]
    assert int(np.argmin(lags)) <= 2
    assert np.linalg.norm(smooth - truth, axis=-1)[10:].mean() < np.linalg.norm(noisy - truth, axis=-1).mean()
    # A higher beta follows fast motion more closely (less lag, more jitter).
    fast = smoothed(noisy, beta=20.0)
    assert acceleration_error(fast, truth) > acceleration_error(smooth, truth)


def test_a_still_point_converges_and_a_jump_is_followed():
    one_euro = OneEuroFilter()
    out = [one_euro(np.array([[0.0, 0.0]]), i / FPS) for i in range(5)]
    assert np.allclose(out, 0)
    values = [one_euro(np.array([[100.0, 0.0]]), (5 + i) / FPS, scale=100.0)[0, 0] for i in range(30)]
    assert 0 < values[0] < 100 and values[-1] == pytest.approx(100, abs=1) and np.all(np.diff(values) >= 0)


def test_bad_parameters_and_times():
    with pytest.raises(ValueError, match='min_cutoff'):
        OneEuroFilter(min_cutoff=0)
    one_euro = OneEuroFilter()
    one_euro(np.zeros((1, 2)), 1.0)
    with pytest.raises(ValueError, match='increase'):
        one_euro(np.zeros((1, 2)), 1.0)


def test_two_sided_smoothing_cuts_jitter_without_lag():
    """Causal output at each frame, then the backward pass over the next second (the fixed lag of video files)."""
    truth, noisy = walk()
    lag, one_euro = int(FPS), OneEuroFilter(min_cutoff=1.5, beta=0.0)
    forward = [one_euro(x, i / FPS, scale=200.0) for i, x in enumerate(noisy)]
    times = np.arange(len(noisy)) / FPS
    smooth = np.stack([two_sided(forward[i], noisy[i:i + lag + 1], times[i:i + lag + 1], [200.0] * (lag + 1),
                                 1.5, 0.0) for i in range(len(noisy))])
    assert acceleration_error(smooth, truth) < acceleration_error(noisy, truth) / 3
    # No lag: the smoothed track is closest to the truth of the same frame, and nearer to it than the noise.
    shifts = [np.linalg.norm(smooth[10 + s:] - truth[10:len(truth) - s], axis=-1).mean() for s in range(4)]
    assert int(np.argmin(shifts)) == 0
    assert np.linalg.norm(smooth - truth, axis=-1).mean() < np.linalg.norm(noisy - truth, axis=-1).mean()
    # The causal filter with the same settings lags: further from the truth than the two-sided one.
    assert np.linalg.norm(np.stack(forward) - truth, axis=-1).mean() > np.linalg.norm(smooth - truth, axis=-1).mean()
