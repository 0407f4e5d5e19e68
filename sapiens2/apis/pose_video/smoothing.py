"""The One-Euro filter (Casiez, Roussel and Vogel, CHI 2012): an adaptive low-pass filter for noisy positions.

Slow movements are smoothed strongly (cut-off ``min_cutoff`` Hz: little jitter), fast ones little (the cut-off
rises by ``beta`` per unit of speed: little lag). Speeds are measured per point (the norm over the last axis) and in
units of ``scale`` per second, so that with ``scale`` = the person's box height the same ``beta`` fits a person near
the camera and one far away.

A causal filter trades jitter for lag. Where the next frames can be waited for (video files), the two-sided
filter (:func:`two_sided`) averages the causal estimate with the same filter run backwards from a fixed number of
frames later: the two lags cancel, so it smooths much more strongly at no lag (benchmarks/video.py).
"""
import math
from typing import Optional, Sequence

import numpy as np

#: Causal defaults (live input): jitter down at a bounded lag.
DEFAULT_MIN_CUTOFF = 1.0
DEFAULT_BETA = 1.5
#: Two-sided defaults (video files), tuned on SynthHumans clips (benchmarks/video.py). With no lag to limit, beta
#: would only let a noisy model's jitter through as speed.
TWO_SIDED_MIN_CUTOFF = 1.5
TWO_SIDED_BETA = 0.0


def _alpha(cutoff: np.ndarray, dt: float) -> np.ndarray:
    """Smoothing factor of an exponential filter with ``cutoff`` Hz at time step ``dt`` s."""
    return 1.0 / (1.0 + 1.0 / (2 * math.pi * cutoff * dt))


class OneEuroFilter:
    """Filters a stream of arrays of points (..., D), one call per frame.

    Args:
        min_cutoff: Cut-off frequency (Hz) at rest; lower is smoother.
        beta: How much the cut-off rises with speed (Hz per ``scale`` per second); higher follows fast motion better.
        d_cutoff: Cut-off (Hz) of the filter on the speed itself.
    """

    def __init__(self, min_cutoff: float = DEFAULT_MIN_CUTOFF, beta: float = DEFAULT_BETA,
                 d_cutoff: float = 1.0) -> None:
        if not (min_cutoff > 0 and d_cutoff > 0 and beta >= 0 and math.isfinite(min_cutoff + d_cutoff + beta)):
            raise ValueError(f'One-Euro filter needs min_cutoff > 0, d_cutoff > 0 and beta >= 0, got min_cutoff='
                             f'{min_cutoff}, beta={beta}, d_cutoff={d_cutoff}')
        self.min_cutoff, self.beta, self.d_cutoff = min_cutoff, beta, d_cutoff
        self._value: Optional[np.ndarray] = None
        self._speed: Optional[np.ndarray] = None
        self._time = 0.0

    def __call__(self, value: np.ndarray, time: float, scale: float = 1.0) -> np.ndarray:
        """The filtered ``value`` at ``time`` (seconds, increasing); ``scale`` is the length unit of ``beta``."""
        value = np.asarray(value, np.float64)
        if self._value is None or self._value.shape != value.shape:
            self._value, self._speed, self._time = value, np.zeros(value.shape[:-1]), time
            return value
        dt = time - self._time
        if dt <= 0:
            raise ValueError(f'One-Euro filter times must increase, got {time} after {self._time}')
        speed = np.linalg.norm(value - self._value, axis=-1) / dt / max(scale, 1e-6)
        self._speed = self._speed + _alpha(self.d_cutoff, dt) * (speed - self._speed)
        alpha = _alpha(self.min_cutoff + self.beta * self._speed, dt)[..., None]
        self._value = self._value + alpha * (value - self._value)
        self._time = time
        return self._value


def two_sided(forward: np.ndarray, values: Sequence[np.ndarray], times: Sequence[float], scales: Sequence[float],
              min_cutoff: float, beta: float) -> np.ndarray:
    """The two-sided estimate at ``times[0]``: the mean of ``forward`` (the causal filter's output there) and the
    filter run backwards over ``values`` (from the last, the latest frame waited for, to the first, the frame
    estimated)."""
    backward = OneEuroFilter(min_cutoff, beta)
    for value, time, scale in zip(values[::-1], times[::-1], scales[::-1]):
        estimate = backward(value, -time, scale)
    return (np.asarray(forward, np.float64) + estimate) / 2
