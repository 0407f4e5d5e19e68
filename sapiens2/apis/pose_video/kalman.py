"""A constant-velocity Kalman filter for noisy positions: the causal smoothing of live input.

A causal low-pass filter (One-Euro) lags behind a moving person; this one predicts each point at its estimated
velocity and corrects the prediction by the measurement, so steady motion is followed without lag while the jitter is
averaged out (on pose-tiny's crossing clip: jitter 3.4x lower at +2 % keypoint error, where the causal One-Euro filter
gets 2.2x at +24 %; docs/performance.md). Each coordinate of each point is filtered on its own (a 2x2 covariance in
closed form); noises are in units of ``scale`` (the person's box height), so one setting fits near and far people.
"""
from typing import Optional

import numpy as np

#: Defaults, in box heights: the acceleration noise density (per s^3) and the measurement variance (a pose model's
#: jitter of about 5 % of the person's height), chosen on pose-tiny's crossing clip (benchmarks/video.py) and a walk
#: with swinging limbs (tests/apis/pose_video/test_kalman.py), where less acceleration noise trails the limbs.
DEFAULT_ACCELERATION_NOISE = 1.0
DEFAULT_MEASUREMENT_NOISE = 3e-3
#: Variance of the first velocity estimate (box heights per second, squared): unknown, so the first frames decide.
INITIAL_VELOCITY_VARIANCE = 1.0


class ConstantVelocityFilter:
    """Filters a stream of arrays of points (..., D), one call per frame, as :class:`~.smoothing.OneEuroFilter`.

    Args:
        acceleration_noise: How much the velocity may change (box heights^2 per s^3); higher follows turns sooner.
        measurement_noise: Variance of a measured position (box heights^2); higher smooths more.
    """

    def __init__(self, acceleration_noise: float = DEFAULT_ACCELERATION_NOISE,
                 measurement_noise: float = DEFAULT_MEASUREMENT_NOISE) -> None:
        noises = acceleration_noise + measurement_noise
        if not (acceleration_noise > 0 and measurement_noise > 0 and np.isfinite(noises)):
            raise ValueError(f'the Kalman filter needs acceleration_noise > 0 and measurement_noise > 0, got '
                             f'{acceleration_noise} and {measurement_noise}')
        self.acceleration_noise, self.measurement_noise = acceleration_noise, measurement_noise
        self._position: Optional[np.ndarray] = None
        self._time = 0.0

    def __call__(self, value: np.ndarray, time: float, scale: float = 1.0) -> np.ndarray:
        """The filtered ``value`` at ``time`` (seconds, increasing); ``scale`` is the length unit of the noises."""
        value = np.asarray(value, np.float64)
        unit = max(scale, 1e-6) ** 2
        if self._position is None or self._position.shape != value.shape:
            self._position, self._velocity = value, np.zeros(value.shape)
            # covariance of (position, velocity) per coordinate: [[p00, p01], [p01, p11]]
            self._p00 = np.full(value.shape, self.measurement_noise * unit)
            self._p01 = np.zeros(value.shape)
            self._p11 = np.full(value.shape, INITIAL_VELOCITY_VARIANCE * unit)
            self._time = time
            return value
        dt = time - self._time
        if dt <= 0:
            raise ValueError(f'Kalman filter times must increase, got {time} after {self._time}')
        q, r = self.acceleration_noise * unit, self.measurement_noise * unit
        position = self._position + dt * self._velocity  # predict
        p00 = self._p00 + dt * (2 * self._p01 + dt * self._p11) + q * dt ** 3 / 3
        p01 = self._p01 + dt * self._p11 + q * dt ** 2 / 2
        p11 = self._p11 + q * dt
        gain_position, gain_velocity = p00 / (p00 + r), p01 / (p00 + r)  # correct
        innovation = value - position
        self._position = position + gain_position * innovation
        self._velocity = self._velocity + gain_velocity * innovation
        self._p00, self._p01 = (1 - gain_position) * p00, (1 - gain_position) * p01
        self._p11 = p11 - gain_velocity * p01
        self._time = time
        return self._position
