"""Rooms of rich scenes: walls and floors with procedural textures in several colours each, and distractor objects
(boxes, balls, poles, framed pictures, plants), so that no single colour fills a scene."""
from typing import Tuple

import cv2
import numpy as np

from .background import smooth_noise


def _palette(rng: np.random.Generator, n: int, balanced: bool = False) -> np.ndarray:
    """``n`` random BGR colours (float32, 0..255), from greyish to saturated, dark to light; ``balanced``: hues,
    saturations and values evenly spread, so that every scene's colours average to about the same grey."""
    if balanced:
        spread = (np.arange(n) + 0.5) / n
        hue = (rng.uniform(0, 180) + spread * 180 + rng.uniform(-8, 8, n)) % 180
        hsv = np.stack([hue, rng.permutation(60 + 170 * spread), rng.permutation(70 + 160 * spread)], 1)
    else:
        hsv = np.stack([rng.uniform(0, 180, n), rng.uniform(60, 230, n), rng.uniform(70, 230, n)], 1)
    return cv2.cvtColor(hsv.astype(np.uint8)[None], cv2.COLOR_HSV2BGR)[0].astype(np.float32)


def _colour_mix(rng: np.random.Generator, size: Tuple[int, int], colours: np.ndarray) -> np.ndarray:
    """Large irregular regions of ``colours`` (k, 3), each covering the same share of the image: the level sets
    of a smooth random field cut at its quantiles."""
    height, width = size
    cells = int(rng.integers(2, 5))
    coarse = rng.uniform(0, 1, (cells, cells)).astype(np.float32)
    field = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)
    edges = np.quantile(field, np.arange(1, len(colours)) / len(colours))
    return colours[np.searchsorted(edges, field)]


def pattern(rng: np.random.Generator, size: Tuple[int, int]) -> np.ndarray:
    """A procedural texture mask (H, W) in [0, 1]: bricks, stripes at an angle, dots, checks or grain."""
    height, width = size
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    period = np.float32(rng.uniform(4, max(6, min(size) / 4)))
    kind = int(rng.integers(5))
    if kind == 0:  # bricks: rows of offset blocks with mortar lines
        row = np.floor(ys / period)
        u = xs / (2 * period) + 0.5 * (row % 2)
        return (((ys % period) < 1.2) | ((u % 1.0) * 2 * period < 1.2)).astype(np.float32)
    if kind == 1:
        angle = rng.uniform(0, np.pi)
        return (((xs * np.cos(angle) + ys * np.sin(angle)) / period) % 1.0 < 0.5).astype(np.float32)
    if kind == 2:
        return ((((xs % period) - period / 2)**2 + ((ys % period) - period / 2)**2) < (period / 4)**2).astype(
            np.float32)
    if kind == 3:
        return (((np.floor(xs / period) + np.floor(ys / period)) % 2) == 1).astype(np.float32)
    return np.clip(rng.standard_normal(size, dtype=np.float32) * 0.5 + 0.5, 0, 1)


def _floor_pattern(rng: np.random.Generator, size: Tuple[int, int], horizon: int) -> np.ndarray:
    """Tiles or planks in perspective below ``horizon``: a mask (H, W) in [0, 1]."""
    height, width = size
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    z = np.float32(height) / np.maximum(ys - horizon + 1, 1)  # depth grows towards the horizon
    u = (xs - width * rng.uniform(0.3, 0.7)) * z / width * np.float32(rng.uniform(2, 6))
    v = z * np.float32(rng.uniform(0.5, 2.0))
    if rng.random() < 0.5:
        return ((np.floor(u) + np.floor(v)) % 2).astype(np.float32)  # tiles
    grain = np.sin(v * 12.0 + np.sin(u * 3.0) * 2.0) * 0.25 + 0.5
    return np.clip(np.where((u % 1.0) < 0.06, 0.0, grain), 0, 1).astype(np.float32)  # planks


def _surface(rng: np.random.Generator, size: Tuple[int, int], pattern: np.ndarray) -> np.ndarray:
    """Regions of 4-6 colours of balanced hues with a pattern of a further colour laid over them."""
    base = _colour_mix(rng, size, _palette(rng, int(rng.integers(4, 7)), balanced=True))
    ink = _palette(rng, 1)[0]
    strength = np.float32(rng.uniform(0.2, 0.6))
    return base + (ink - base) * (pattern * strength)[..., None]


def _shade_box(canvas: np.ndarray, x: int, y: int, w: int, h: int, colour: np.ndarray, depth: int) -> None:
    """A box standing with its front face at (x, y, w, h), its top and side drawn lighter and darker."""
    top = np.array([[x, y], [x + w, y], [x + w + depth, y - depth], [x + depth, y - depth]], np.int32)
    side = np.array([[x + w, y], [x + w, y + h], [x + w + depth, y + h - depth], [x + w + depth, y - depth]], np.int32)
    cv2.fillConvexPoly(canvas, top, tuple(float(c) for c in np.minimum(colour * 1.25, 255)))
    cv2.fillConvexPoly(canvas, side, tuple(float(c) for c in colour * 0.6))
    cv2.rectangle(canvas, (x, y), (x + w, y + h), tuple(float(c) for c in colour), -1)


def _distractors(rng: np.random.Generator, canvas: np.ndarray, horizon: int) -> None:
    """2-7 objects in their own colours: boxes and balls on the floor, poles, framed pictures, leafy plants."""
    height, width = canvas.shape[:2]
    for _ in range(int(rng.integers(2, 8))):
        colour = _palette(rng, 1)[0]
        kind = int(rng.integers(5))
        x = int(rng.integers(width))
        base = int(rng.uniform(horizon, height))
        if kind == 0:
            w, h = int(rng.uniform(0.08, 0.3) * width), int(rng.uniform(0.06, 0.3) * height)
            _shade_box(canvas, x - w // 2, base - h, w, h, colour, max(1, w // 4))
        elif kind == 1:
            r = max(2, int(rng.uniform(0.03, 0.1) * width))
            for step in range(4):  # light from above: concentric, lighter discs towards the top
                f = 0.7 + 0.15 * step
                cv2.circle(canvas, (x - step * r // 8, base - r - step * r // 6), r * (4 - step) // 4,
                           tuple(float(c) for c in np.minimum(colour * f, 255)), -1)
        elif kind == 2:
            w = max(1, int(rng.uniform(0.01, 0.04) * width))
            cv2.rectangle(canvas, (x, int(rng.uniform(0, horizon))), (x + w, base), tuple(float(c) for c in colour), -1)
        elif kind == 3:
            w, h = int(rng.uniform(0.1, 0.3) * width), int(rng.uniform(0.08, 0.25) * height)
            y = int(rng.uniform(0, max(1, horizon - h)))
            inner = _palette(rng, 3)
            cv2.rectangle(canvas, (x, y), (x + w, y + h), tuple(float(c) for c in colour), -1)
            border = max(1, w // 10)
            for i, c in enumerate(inner):
                cv2.rectangle(canvas, (x + border, y + border + i * (h - 2 * border) // 3),
                              (x + w - border, y + border + (i + 1) * (h - 2 * border) // 3),
                              tuple(float(v) for v in c), -1)
        else:
            r = max(2, int(rng.uniform(0.02, 0.06) * width))
            for _ in range(int(rng.integers(4, 10))):
                centre = (x + int(rng.normal(0, 2 * r)), base - int(abs(rng.normal(2 * r, 2 * r))))
                leaf = colour * np.float32(rng.uniform(0.6, 1.2))
                cv2.ellipse(canvas, centre, (r, max(1, r // 2)), float(rng.uniform(0, 180)), 0, 360,
                            tuple(float(c) for c in np.minimum(leaf, 255)), -1)


def render_rich_background(seed: int, size: Tuple[int, int], flip: bool = False) -> np.ndarray:
    """A BGR uint8 room of ``size = (H, W)`` for a rich scene, deterministic in ``seed``; ``flip`` mirrors it."""
    rng = np.random.default_rng([seed, 5])
    height, width = size
    horizon = int(rng.uniform(0.3, 0.75) * height)
    canvas = _surface(rng, size, pattern(rng, size))
    canvas[horizon:] = _surface(rng, size, _floor_pattern(rng, size, horizon))[horizon:]
    canvas = np.ascontiguousarray(canvas)
    _distractors(rng, canvas, horizon)
    canvas += smooth_noise(rng, size, int(rng.integers(3, 7)), 25.0)
    out = np.clip(np.round(canvas), 0, 255).astype(np.uint8)
    return out[:, ::-1].copy() if flip else out
