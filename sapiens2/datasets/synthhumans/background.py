"""Random textured backgrounds (a wall and a floor with smooth colour noise, stripes and shapes) and sensor noise."""
from typing import Tuple

import cv2
import numpy as np


def smooth_noise(rng: np.random.Generator, size: Tuple[int, int], cells: int, amplitude: float) -> np.ndarray:
    height, width = size
    coarse = rng.uniform(-amplitude, amplitude, (cells, cells, 3)).astype(np.float32)
    return cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)


def _shapes(rng: np.random.Generator, canvas: np.ndarray) -> None:
    height, width = canvas.shape[:2]
    for _ in range(int(rng.integers(2, 9))):
        color = tuple(float(c) for c in rng.uniform(0, 255, 3))
        x, y = int(rng.integers(width)), int(rng.integers(height))
        kind = rng.integers(3)
        if kind == 0:
            w, h = int(rng.integers(8, width // 2)), int(rng.integers(8, height // 2))
            cv2.rectangle(canvas, (x, y), (x + w, y + h), color, -1)
        elif kind == 1:
            cv2.circle(canvas, (x, y), int(rng.integers(4, width // 4)), color, -1)
        else:
            x2, y2 = int(rng.integers(width)), int(rng.integers(height))
            cv2.line(canvas, (x, y), (x2, y2), color, int(rng.integers(1, 6)))


def render_background(seed: int, size: Tuple[int, int], flip: bool = False) -> np.ndarray:
    """A BGR uint8 background of ``size = (H, W)``, deterministic in ``seed``; ``flip`` mirrors it horizontally."""
    rng = np.random.default_rng(seed)
    height, width = size
    wall, floor = rng.uniform(30, 225, 3), rng.uniform(30, 225, 3)
    horizon = int(rng.uniform(0.3, 0.75) * height)
    canvas = np.empty((height, width, 3), np.float32)
    canvas[:horizon] = wall
    canvas[horizon:] = floor
    period = int(rng.integers(6, 40))
    stripes = (np.arange(width) // period) % 2 == 1
    canvas[:, stripes] += rng.uniform(-25, 25, 3).astype(np.float32)
    _shapes(rng, canvas)
    canvas += smooth_noise(rng, size, int(rng.integers(3, 7)), 40.0)
    saturation = np.float32(rng.uniform(0.3, 1.0))
    canvas = canvas.mean(axis=2, keepdims=True) * (1 - saturation) + canvas * saturation
    out = np.clip(np.round(canvas), 0, 255).astype(np.uint8)
    return out[:, ::-1].copy() if flip else out


def sensor_noise(seed: int, size: Tuple[int, int], flip: bool = False) -> np.ndarray:
    """Zero-mean Gaussian pixel noise (H, W, 3) float32 for the final image, deterministic in ``seed``."""
    rng = np.random.default_rng([seed, 1])
    noise = rng.standard_normal(size + (3, ), dtype=np.float32) * np.float32(rng.uniform(1.0, 4.0))
    return noise[:, ::-1] if flip else noise
