"""Lighting of rich scenes: a coloured key and fill light on the people, and an illumination field whose colour and
strength vary over the image, so that the colour cast differs between parts of one scene."""
from dataclasses import dataclass, replace
from typing import Tuple

import cv2
import numpy as np


@dataclass(frozen=True)
class FillLight:
    """A second directional light of its own colour (rich scenes): unit direction towards it, BGR gain."""
    direction: Tuple[float, float, float]
    colour: Tuple[float, float, float]


def _tint(rng: np.random.Generator, strength: float) -> np.ndarray:
    """A random BGR gain of mean about 1 whose channels differ by up to ``strength``."""
    gain = 1.0 + rng.uniform(-strength, strength, 3)
    return gain / gain.mean()


def sample_rich_light(rng: np.random.Generator, light):
    """``light`` (a :class:`.scene.Light`) with a tinted key colour and a tinted fill light from another side."""
    key = _tint(rng, 0.35)
    direction = np.array([rng.uniform(-1.0, 1.0), rng.uniform(-0.6, 0.6), rng.uniform(-1.0, -0.2)])
    direction[0] = -np.sign(light.direction[0]) * abs(direction[0])  # from the side opposite the key light
    fill = _tint(rng, 0.6) * rng.uniform(0.15, 0.5)
    return replace(light, colour=tuple(float(v) for v in key),
                   fill=FillLight(direction=tuple(float(v) for v in direction / np.linalg.norm(direction)),
                                  colour=tuple(float(v) for v in fill)))


def illumination_field(seed: int, size: Tuple[int, int], flip: bool = False) -> np.ndarray:
    """BGR gain (H, W, 3) float64 deterministic in ``seed``: a pool of tinted light over an ambient of the
    complementary tint, with a smooth brightness gradient, scaled to the same mean gain in every channel; ``flip``
    mirrors it as :func:`.background.render_background` does."""
    rng = np.random.default_rng([seed, 4])
    height, width = size
    ys, xs = np.mgrid[0:height, 0:width] / np.float64(max(height, width))
    cx, cy = rng.uniform(0.0, width / max(height, width)), rng.uniform(0.0, height / max(height, width))
    radius = rng.uniform(0.25, 0.5)
    pool = np.exp(-((xs - cx)**2 + (ys - cy)**2) / radius**2)[..., None]
    tint = _tint(rng, 0.6)  # the pool has the complementary tint of the ambient: the whole image stays near grey
    ambient, spot = tint * rng.uniform(0.7, 0.85), (1.0 / tint) / (1.0 / tint).mean() * rng.uniform(1.05, 1.25)
    angle = rng.uniform(0.0, 2 * np.pi)
    ramp = 1.0 + rng.uniform(0.0, 0.35) * ((xs - 0.5) * np.cos(angle) + (ys - 0.5) * np.sin(angle))
    coarse = rng.uniform(0.85, 1.15, (3, 3, 3)).astype(np.float32)
    blotches = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC).astype(np.float64)
    field = (ambient + (spot - ambient) * pool) * ramp[..., None] * blotches
    field *= rng.uniform(0.85, 1.0) / field.mean((0, 1))  # the same mean gain in every channel: no overall cast
    return field[:, ::-1] if flip else field
