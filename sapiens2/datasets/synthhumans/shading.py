"""Lambertian shading and compositing of the people layer over the background."""
import numpy as np


def shading(normal: np.ndarray, direction, ambient: float, intensity: float) -> np.ndarray:
    """Per-pixel shading factor ``intensity * (ambient + (1 - ambient) * max(n . l, 0))`` (H, W)."""
    lx, ly, lz = direction
    lam = np.maximum(normal[..., 0] * lx + normal[..., 1] * ly + normal[..., 2] * lz, 0.0)
    return intensity * (ambient + (1.0 - ambient) * lam)


def composite(premult: np.ndarray, alpha: np.ndarray, background: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The pre-multiplied people layer over the background, plus sensor ``noise`` (BGR uint8)."""
    image = premult + (1.0 - alpha[..., None]) * background + noise
    return np.clip(np.round(image), 0, 255).astype(np.uint8)
