"""Lambertian shading of the albedo and compositing over the background."""
import numpy as np


def shading(normal: np.ndarray, direction, ambient: float, intensity: float) -> np.ndarray:
    """Per-pixel shading factor ``intensity * (ambient + (1 - ambient) * max(n . l, 0))`` (H, W)."""
    lx, ly, lz = direction
    lam = np.maximum(normal[..., 0] * lx + normal[..., 1] * ly + normal[..., 2] * lz, 0.0)
    return intensity * (ambient + (1.0 - ambient) * lam)


def composite(albedo: np.ndarray, shade: np.ndarray, mask: np.ndarray, background: np.ndarray,
              noise: np.ndarray) -> np.ndarray:
    """``albedo * shade`` on the mask, the background elsewhere, plus sensor ``noise`` (BGR uint8)."""
    image = np.where(mask[..., None], albedo * shade[..., None], background) + noise
    return np.clip(np.round(image), 0, 255).astype(np.uint8)
