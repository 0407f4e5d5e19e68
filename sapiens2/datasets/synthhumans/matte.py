"""The soft alpha matte of the people and their pre-multiplied colour: anti-aliased silhouettes, loose hair with
fractional coverage, and motion blur.

Every map here is (H, W[, 3]) float: ``alpha`` in [0, 1], ``premult`` = alpha x colour in BGR 0..255, so that the
image is ``premult + (1 - alpha) x background``.
"""
from typing import Sequence, Tuple

import cv2
import numpy as np

from .appearance import HairFuzz
from .primitives import PrimitiveSet
from .raster import NEAR, box_window, ellipsoid_span, rasterise_samples
from .shading import light_shading

# Sub-samples per pixel axis on silhouette edges (a regular grid, symmetric about the pixel centre).
EDGE_SUBSAMPLES = 4


def edge_band(mask: np.ndarray) -> np.ndarray:
    """Pixels whose 3x3 neighbourhood holds both foreground and background pixels of the binary ``mask``."""
    m = mask.astype(np.uint8)
    kernel = np.ones((3, 3), np.uint8)
    return cv2.dilate(m, kernel) != cv2.erode(m, kernel)


def antialiased_layer(prims: PrimitiveSet, K: np.ndarray, size: Tuple[int, int], prim: np.ndarray,
                      colour: np.ndarray, albedo_lut: np.ndarray, light) -> Tuple[np.ndarray, np.ndarray]:
    """Coverage and pre-multiplied colour of the solid primitives.

    ``prim`` is the pixel-centre primitive index map and ``colour`` the shaded colour there (H, W, 3). Away from
    silhouettes the coverage is the binary mask; on the :func:`edge_band` it is the hit fraction of
    ``EDGE_SUBSAMPLES**2`` sub-pixel rays, each shaded at its own hit.
    """
    fg = prim >= 0
    alpha = fg.astype(np.float64)
    premult = colour * alpha[..., None]
    ys, xs = np.nonzero(edge_band(fg))
    if not len(ys):
        return alpha, premult
    offsets = (np.arange(EDGE_SUBSAMPLES) + 0.5) / EDGE_SUBSAMPLES - 0.5
    off_u, off_v = (o.ravel() for o in np.meshgrid(offsets, offsets))
    u = (xs[:, None] + off_u[None]).ravel()
    v = (ys[:, None] + off_v[None]).ravel()
    hits = rasterise_samples(prims, K, size, u, v)
    hit = hits.prim >= 0
    shade = light_shading(hits.normal, light)
    sample_colour = np.where(hit[:, None], albedo_lut[np.maximum(hits.prim, 0)] * shade, 0.0)
    count = EDGE_SUBSAMPLES**2
    alpha[ys, xs] = hit.reshape(-1, count).mean(1)
    premult[ys, xs] = sample_colour.reshape(-1, count, 3).mean(1)
    return alpha, premult


def _hair_density(local: np.ndarray, fuzz: HairFuzz) -> np.ndarray:
    """Relative hair density in [0, 1] at points (..., 3) in outer-shell unit coordinates (head-local axes).

    Dense at the solid hair, thinning out to zero at the outer surface, with strands that run from the crown down
    (a pattern in the angle about the vertical axis, mirror-symmetric in x).
    """
    radius = np.linalg.norm(local, axis=-1)
    depth_in_shell = np.clip((1.0 - radius) * (1.0 + fuzz.thickness) / fuzz.thickness, 0.0, 1.0)
    theta = np.arctan2(np.abs(local[..., 0]), local[..., 2])
    wave = np.cos(fuzz.strands * theta + fuzz.wave * np.sin(4.0 * local[..., 1]) + fuzz.phase)
    return depth_in_shell**1.5 * (0.2 + 0.8 * (0.5 + 0.5 * wave)**2)


def hair_layer(shells: Sequence[tuple], K: np.ndarray, size: Tuple[int, int], depth: np.ndarray,
               light) -> Tuple[np.ndarray, np.ndarray]:
    """Alpha and pre-multiplied colour of the loose-hair shells, in front of the solid surfaces.

    Each shell is ``(centre, rot, inner_radii, albedo_bgr, fuzz, face)`` in the camera frame, ``face`` (H, W) bool
    the pixels whose solid hit is the face of the shell's person (the shell never covers it); its outer surface is the
    inner ellipsoid scaled by ``1 + fuzz.thickness``. Along each pixel ray the optical depth is
    ``density x strand pattern x path length inside the shell (up to the first solid hit) / shell thickness``;
    alpha = 1 - exp(-optical depth), the colour is the hair albedo shaded at the shell entry point.
    ``depth`` is the solid z-depth map (0 on background).
    """
    height, width = size
    solid = np.where(depth > 0, depth, np.inf)
    tau = np.zeros(size)
    tau_colour = np.zeros(size + (3, ))
    dx_all = (np.arange(width) - K[0, 2]) / K[0, 0]
    dy_all = (np.arange(height) - K[1, 2]) / K[1, 1]
    for centre, rot, inner, albedo, fuzz, face in shells:
        allowed = ~face
        outer = np.asarray(inner) * (1.0 + fuzz.thickness)
        extent = np.sqrt(((rot * outer[None])**2).sum(1))
        window = box_window((centre - extent)[None], (centre + extent)[None], K, size)
        if window is None:
            continue
        y0, y1, x0, x1 = window
        inv = (rot.T / outer[:, None])[None]
        t0, t1 = ellipsoid_span(dx_all[None, x0:x1, None], dy_all[y0:y1, None, None], inv, (inv[0] @ centre)[None])
        t0, t1 = t0[..., 0], t1[..., 0]
        start = np.maximum(t0, NEAR)
        end = np.minimum(t1, solid[y0:y1, x0:x1])
        inside = np.isfinite(t0) & (end > start)
        if not inside.any():
            continue
        start, end = np.where(inside, start, 0.0), np.where(inside, end, 0.0)
        length = end - start
        rays = np.stack(np.broadcast_arrays(dx_all[None, x0:x1], dy_all[y0:y1, None], 1.0), -1)
        mid = rays * ((start + end) / 2)[..., None]
        local = ((mid - centre) @ rot) / outer
        thickness = float(np.mean(outer - np.asarray(inner)))
        shell_tau = fuzz.density * _hair_density(local, fuzz) * length / thickness * allowed[y0:y1, x0:x1]
        entry = rays * start[..., None]
        normal = (((entry - centre) @ rot) / outer**2) @ rot.T
        normal /= np.maximum(np.linalg.norm(normal, axis=-1, keepdims=True), 1e-12)
        shade = light_shading(normal, light)
        tau[y0:y1, x0:x1] += shell_tau
        tau_colour[y0:y1, x0:x1] += shell_tau[..., None] * np.asarray(albedo, np.float64) * shade
    alpha = 1.0 - np.exp(-tau)
    colour = tau_colour / np.maximum(tau, 1e-12)[..., None]
    return alpha, colour * alpha[..., None]


def over(front_alpha: np.ndarray, front_premult: np.ndarray, back_alpha: np.ndarray,
         back_premult: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Porter-Duff ``over`` of two pre-multiplied layers."""
    keep = 1.0 - front_alpha
    return front_alpha + keep * back_alpha, front_premult + keep[..., None] * back_premult


def motion_kernel(length: float, angle: float) -> np.ndarray:
    """A normalised line kernel of ``length`` pixels at ``angle`` (radians from the image x axis, y down).

    Angles above pi / 2 use the mirror image of the kernel at pi - angle, so mirrored scenes blur exactly mirrored.
    """
    if angle > np.pi / 2:
        return motion_kernel(length, np.pi - angle)[:, ::-1].copy()
    radius = int(np.ceil(length / 2))
    kernel = np.zeros((2 * radius + 1, 2 * radius + 1))
    steps = np.linspace(-length / 2, length / 2, max(4 * radius + 1, 2))
    xs, ys = radius + steps * np.cos(angle), radius + steps * np.sin(angle)
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    fx, fy = xs - x0, ys - y0
    for dx, dy, weight in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy),
                           (1, 1, fx * fy)):
        xi, yi = np.clip(x0 + dx, 0, 2 * radius), np.clip(y0 + dy, 0, 2 * radius)
        np.add.at(kernel, (yi, xi), weight)
    return kernel / kernel.sum()


def motion_blur(alpha: np.ndarray, premult: np.ndarray, length: float,
                angle: float) -> Tuple[np.ndarray, np.ndarray]:
    """Blur the pre-multiplied layer (alpha and colour alike) along a line; a no-op below one pixel."""
    if length < 1.0:
        return alpha, premult
    kernel = motion_kernel(length, angle)
    blur = [cv2.filter2D(np.ascontiguousarray(a, np.float64), -1, kernel, borderType=cv2.BORDER_REFLECT)
            for a in (alpha, premult)]
    return np.clip(blur[0], 0.0, 1.0), np.maximum(blur[1], 0.0)
