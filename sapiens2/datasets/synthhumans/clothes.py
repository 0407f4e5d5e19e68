"""Patterned clothes: stripes, checks, dots, bricks or grain printed on the garments, and fabric folds as soft
shading, so that a person is not a few flat colours (real clothes rarely are; docs/synthhumans.md)."""
from typing import Tuple

import numpy as np

from .background import smooth_noise
from .metainfo import seg_ids
from .rich_background import pattern

# Each garment's part labels: a pair of shoes or socks gets one print, so the mirrored scene prints the same.
GARMENTS = (('Upper_Clothing', ), ('Lower_Clothing', ), ('Apparel', ), ('Left_Shoe', 'Right_Shoe'),
            ('Left_Sock', 'Right_Sock'))
PLAIN_SHARE = 0.25  # garments left one colour (folds only)


def _ink(rng: np.random.Generator, base: np.ndarray) -> np.ndarray:
    """The print's colour: another colour, or the garment's own made darker or lighter (BGR float32)."""
    if rng.random() < 0.5:
        return rng.uniform(0, 255, 3).astype(np.float32)
    return np.clip(base * np.float32(rng.choice((rng.uniform(0.3, 0.7), rng.uniform(1.3, 2.0)))), 0, 255)


def print_clothes(seed: int, size: Tuple[int, int], flip: bool, seg: np.ndarray, instance: np.ndarray,
                  albedo: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``albedo`` (H, W, 3) uint8 with a print on each garment of each person, and the folds' shading factor
    (H, W) float32 (1 off the garments); deterministic in ``seed``, ``flip`` mirrors the prints as the scene is."""
    ids = seg_ids()
    out = albedo.astype(np.float32)
    folds = np.ones(size, np.float32)
    for person in np.unique(instance[instance > 0]):
        for garment, labels in enumerate(GARMENTS):
            region = (instance == person) & np.isin(seg, [ids[name] for name in labels])
            if not region.any():
                continue
            rng = np.random.default_rng([seed, 4, int(person), garment])
            fold = 1.0 + smooth_noise(rng, size, int(rng.integers(6, 16)), 0.25)[..., 0]
            folds[region] = (fold[:, ::-1] if flip else fold)[region]
            if rng.random() < PLAIN_SHARE:
                continue
            ink = pattern(rng, size) * np.float32(rng.uniform(0.4, 1.0))
            ink = (ink[:, ::-1] if flip else ink)[region][:, None]  # (pixels, 1)
            colour = _ink(rng, out[region].mean(0))
            out[region] += (colour - out[region]) * ink
    return np.clip(np.round(out), 0, 255).astype(np.uint8), folds
