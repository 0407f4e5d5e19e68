"""Pictures of mattes: the alpha as grey, a cut-out over a checkerboard, and an RGBA cut-out (BGR(A) uint8 arrays)."""
import numpy as np


def checkerboard(height: int, width: int, cell: int = 16, shades=(160, 224)) -> np.ndarray:
    """A grey (H, W, 3) uint8 checkerboard of ``cell``-pixel squares."""
    ys, xs = np.indices((height, width))
    board = np.where(((ys // cell) + (xs // cell)) % 2 == 0, shades[0], shades[1]).astype(np.uint8)
    return np.repeat(board[..., None], 3, axis=2)


def alpha_to_bgr(alpha: np.ndarray) -> np.ndarray:
    """An (H, W) alpha in [0, 1] as a grey BGR uint8 picture."""
    grey = np.round(np.clip(alpha, 0.0, 1.0) * 255).astype(np.uint8)
    return np.repeat(grey[..., None], 3, axis=2)


def composite_over(foreground_rgb: np.ndarray, alpha: np.ndarray, background_bgr: np.ndarray) -> np.ndarray:
    """The pre-multiplied RGB foreground (H, W, 3) in [0, 1] with its alpha over a BGR uint8 background."""
    fg = np.clip(foreground_rgb[..., ::-1], 0.0, 1.0) * 255
    out = fg + (1 - np.clip(alpha, 0.0, 1.0)[..., None]) * background_bgr.astype(np.float64)
    return np.round(np.clip(out, 0, 255)).astype(np.uint8)


def rgba_cutout(foreground_rgb: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """A BGRA uint8 cut-out (straight alpha, as PNG stores it): colour = foreground / alpha, 0 where alpha = 0."""
    alpha = np.clip(alpha, 0.0, 1.0)
    straight = np.clip(foreground_rgb / np.maximum(alpha, 1e-6)[..., None], 0.0, 1.0)
    straight[alpha <= 0] = 0.0
    bgr = np.round(straight[..., ::-1] * 255).astype(np.uint8)
    return np.concatenate([bgr, np.round(alpha * 255).astype(np.uint8)[..., None]], axis=2)
