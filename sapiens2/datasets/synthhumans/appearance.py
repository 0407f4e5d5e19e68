"""Colours (BGR uint8), clothing and hair choices of one person, and their sampling."""
from dataclasses import dataclass
from typing import Tuple

import numpy as np

Color = Tuple[int, int, int]

# Skin tones (RGB), from light to dark.
_SKIN_RGB = ((255, 224, 196), (241, 194, 160), (224, 172, 130), (198, 140, 100), (160, 110, 75), (120, 80, 52),
             (88, 58, 38))
_HAIR_RGB = ((20, 16, 14), (60, 40, 25), (110, 75, 40), (200, 160, 100), (140, 60, 30), (150, 150, 150))


@dataclass(frozen=True)
class Appearance:
    """Albedo colours and garment/hair/accessory choices.

    ``top`` is the label of the torso shell ('Torso' = bare, 'Upper_Clothing' or 'Apparel'); ``sleeves`` is
    'none', 'short' or 'long'; ``bottom`` is 'shorts' or 'trousers' with ``shorts_len`` the covered thigh fraction;
    ``socks`` is the covered fraction of the shank above a shoe (0 = no socks).
    """
    skin: Color
    hair: Color
    hair_style: str
    top: str
    top_color: Color
    sleeves: str
    bottom: str
    bottom_color: Color
    shorts_len: float
    shoes: bool
    shoe_color: Color
    socks: float
    sock_color: Color
    glasses: bool
    glasses_color: Color
    lip_color: Color
    eye_color: Color


def _bgr(rgb) -> Color:
    return int(rgb[2]), int(rgb[1]), int(rgb[0])


def _jitter(rng: np.random.Generator, rgb, amount: int) -> Color:
    return _bgr(np.clip(np.array(rgb) + rng.integers(-amount, amount + 1, 3), 0, 255))


def _garment(rng: np.random.Generator) -> Color:
    """A random garment colour: saturated, pastel or near-grey."""
    kind = rng.integers(3)
    base = rng.integers(0, 256, 3)
    if kind == 1:
        base = 128 + base // 2
    elif kind == 2:
        base = np.full(3, rng.integers(20, 235)) + rng.integers(-12, 13, 3)
    return _bgr(np.clip(base, 0, 255))


def _choice(rng: np.random.Generator, options, probs):
    return options[int(rng.choice(len(options), p=probs))]


def sample_appearance(rng: np.random.Generator) -> Appearance:
    skin_rgb = np.array(_SKIN_RGB[rng.integers(len(_SKIN_RGB))])
    top = _choice(rng, ('Torso', 'Upper_Clothing', 'Apparel'), (0.15, 0.7, 0.15))
    lip = np.clip(skin_rgb * np.array([0.85, 0.55, 0.55]), 0, 255)
    return Appearance(
        skin=_jitter(rng, skin_rgb, 12), hair=_jitter(rng, _HAIR_RGB[rng.integers(len(_HAIR_RGB))], 10),
        hair_style=_choice(rng, ('bald', 'short', 'long'), (0.1, 0.6, 0.3)), top=top, top_color=_garment(rng),
        sleeves='none' if top == 'Torso' else _choice(rng, ('none', 'short', 'long'), (0.25, 0.5, 0.25)),
        bottom=_choice(rng, ('shorts', 'trousers'), (0.5, 0.5)), bottom_color=_garment(rng),
        shorts_len=float(rng.uniform(0.3, 0.8)), shoes=bool(rng.random() < 0.6), shoe_color=_garment(rng),
        socks=float(rng.uniform(0.1, 0.45) if rng.random() < 0.5 else 0.0), sock_color=_garment(rng),
        glasses=bool(rng.random() < 0.2), glasses_color=_garment(rng), lip_color=_bgr(lip),
        eye_color=_jitter(rng, (45, 35, 30), 15))


@dataclass(frozen=True)
class HairFuzz:
    """A semi-transparent shell of loose hair around the solid hair ellipsoids (alpha matting ground truth).

    ``thickness``: shell depth as a fraction of the hair radii; ``density``: optical depth across the shell at
    normal incidence; ``strands``, ``wave``, ``phase``: the strand pattern running from the crown down.
    """
    thickness: float
    density: float
    strands: int
    wave: float
    phase: float


def sample_hair_fuzz(rng: np.random.Generator) -> HairFuzz:
    return HairFuzz(thickness=float(rng.uniform(0.15, 0.45)), density=float(rng.uniform(0.8, 2.5)),
                    strands=int(rng.integers(16, 48)), wave=float(rng.uniform(0.0, 3.0)),
                    phase=float(rng.uniform(0.0, 2 * np.pi)))
