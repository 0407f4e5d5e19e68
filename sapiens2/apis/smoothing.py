"""The One-Euro filter (Casiez, Roussel and Vogel, CHI 2012): an adaptive low-pass filter for noisy positions.

Slow movements are smoothed strongly (cut-off ``min_cutoff`` Hz: little jitter), fast ones little (the cut-off
rises by ``beta`` per unit of speed: little lag). Speeds are measured per point (the norm over the last axis) and in
units of ``scale`` per second, so that with ``scale`` = the person's box height the same ``beta`` fits a person near
the camera and one far away.
"""
import math
from typing import Optional

import numpy as np

#: Defaults tuned on SynthHumans clips (benchmarks/video.py): jitter down more than 3x at a bounded lag.
DEFAULT_MIN_CUTOFF = 1.0
DEFAULT_BETA = 1.5


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
        if min_cutoff <= 0 or d_cutoff <= 0 or beta < 0:
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
