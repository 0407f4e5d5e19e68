"""Small rotation and surface-point helpers."""
import numpy as np


def rx(a: float) -> np.ndarray:
    """Rotation by ``a`` radians about the x axis."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def ry(a: float) -> np.ndarray:
    """Rotation by ``a`` radians about the y axis."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rz(a: float) -> np.ndarray:
    """Rotation by ``a`` radians about the z axis."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def on_ellipsoid(center: np.ndarray, rot: np.ndarray, radii, direction) -> np.ndarray:
    """The surface point of ellipsoid ``center + rot @ diag(radii) @ unit_ball`` along unit-ball ``direction``."""
    d = np.asarray(direction, np.float64)
    return center + rot @ (np.asarray(radii) * d / np.linalg.norm(d))
