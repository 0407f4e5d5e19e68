"""Lambertian shading and compositing of the people layer over the background."""
import numpy as np


def shading(normal: np.ndarray, direction, ambient: float, intensity: float) -> np.ndarray:
    """Per-pixel shading factor ``intensity * (ambient + (1 - ambient) * max(n . l, 0))`` (H, W)."""
    lx, ly, lz = direction
    lam = np.maximum(normal[..., 0] * lx + normal[..., 1] * ly + normal[..., 2] * lz, 0.0)
    return intensity * (ambient + (1.0 - ambient) * lam)


def light_shading(normal: np.ndarray, light) -> np.ndarray:
    """Shading factor of ``light`` (a :class:`.scene.Light`): (..., 1) for a white light, (..., 3) BGR when it has
    a colour or a coloured fill light (rich scenes), so the colour of the light varies with the surface direction."""
    shade = shading(normal, light.direction, light.ambient, light.intensity)[..., None]
    if light.colour is None and light.fill is None:
        return shade
    if light.colour is not None:
        shade = shade * np.asarray(light.colour, np.float64)
    if light.fill is not None:
        fill = shading(normal, light.fill.direction, 0.0, 1.0)[..., None]
        shade = shade + fill * np.asarray(light.fill.colour, np.float64)
    return shade


def composite(premult: np.ndarray, alpha: np.ndarray, background: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """The pre-multiplied people layer over the background, plus sensor ``noise`` (BGR uint8)."""
    image = premult + (1.0 - alpha[..., None]) * background + noise
    return np.clip(np.round(image), 0, 255).astype(np.uint8)
