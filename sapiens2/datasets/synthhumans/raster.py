"""Z-buffer ray casting of capsules and ellipsoids in the OpenCV camera frame (x right, y down, z forward).

Every pixel centre (u, v) casts the ray ``t * d`` with ``d = ((u - cx) / fx, (v - cy) / fy, 1)``, so the ray parameter
``t`` of a hit is its metric z-depth. Primitives are evaluated group by group, only over the union of their projected
bounding boxes, with the primitives of a group along the last array axis.
"""
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from .primitives import PrimitiveSet

NEAR = 1e-3


@dataclass
class RasterResult:
    """Per-pixel z-depth (0 on background), primitive index (-1 on background) and unit camera-facing normals.

    Primitive indices run over the capsules first, then the ellipsoids, in :class:`PrimitiveSet` order.
    """
    depth: np.ndarray
    prim: np.ndarray
    normal: np.ndarray


def box_window(lo: np.ndarray, hi: np.ndarray, K: np.ndarray, size: Tuple[int, int]):
    """Pixel window ``(y0, y1, x0, x1)`` covering the projections of the 3D boxes [lo, hi] (N, 3), or None."""
    height, width = size
    if (lo[:, 2] <= NEAR).any():
        return (0, height, 0, width)
    inv_z = np.stack([1.0 / lo[:, 2], 1.0 / hi[:, 2]], 1)
    xs = np.concatenate([lo[:, :1] * inv_z, hi[:, :1] * inv_z], 1)
    ys = np.concatenate([lo[:, 1:2] * inv_z, hi[:, 1:2] * inv_z], 1)
    x0 = max(int(np.floor(K[0, 2] + K[0, 0] * xs.min())), 0)
    x1 = min(int(np.ceil(K[0, 2] + K[0, 0] * xs.max())) + 1, width)
    y0 = max(int(np.floor(K[1, 2] + K[1, 1] * ys.min())), 0)
    y1 = min(int(np.ceil(K[1, 2] + K[1, 1] * ys.max())) + 1, height)
    if x0 >= x1 or y0 >= y1:
        return None
    return y0, y1, x0, x1


def _capsule_t(dx, dy, a, b, r):
    """Ray parameters (h, w, N) of the first hit with N capsules (inf on a miss)."""
    ba = b - a
    oa, ob = -a, -b
    baba = (ba * ba).sum(1)
    baoa = (ba * oa).sum(1)
    bard = ba[:, 0] * dx + ba[:, 1] * dy + ba[:, 2]
    rdoa = oa[:, 0] * dx + oa[:, 1] * dy + oa[:, 2]
    dd = dx * dx + dy * dy + 1.0
    k_a = baba * dd - bard * bard
    k_b = baba * rdoa - baoa * bard
    k_c = baba * (oa * oa).sum(1) - baoa * baoa - r * r * baba
    disc = k_b * k_b - k_a * k_c
    hit = disc >= 0
    with np.errstate(divide='ignore', invalid='ignore'):
        t_body = (-k_b - np.sqrt(np.where(hit, disc, 0.0))) / k_a
    y = baoa + t_body * bard
    body = hit & (y > 0) & (y < baba)
    use_a = y <= 0
    rdoc = np.where(use_a, rdoa, ob[:, 0] * dx + ob[:, 1] * dy + ob[:, 2])
    ococ = np.where(use_a, (oa * oa).sum(1), (ob * ob).sum(1))
    disc_cap = rdoc * rdoc - dd * (ococ - r * r)
    cap = hit & ~body & (disc_cap >= 0)
    t_cap = (-rdoc - np.sqrt(np.where(cap, disc_cap, 0.0))) / dd
    t = np.where(body, t_body, np.where(cap, t_cap, np.inf))
    return np.where(t > NEAR, t, np.inf)


def _ellipsoid_t(dx, dy, inv, g):
    """Ray parameters (h, w, N) of the first hit with N ellipsoids given ``inv = S^-1 R^T`` and ``g = inv @ c``."""
    e = [inv[:, i, 0] * dx + inv[:, i, 1] * dy + inv[:, i, 2] for i in range(3)]
    k_a = e[0] * e[0] + e[1] * e[1] + e[2] * e[2]
    k_b = e[0] * g[:, 0] + e[1] * g[:, 1] + e[2] * g[:, 2]
    k_c = (g * g).sum(1) - 1.0
    disc = k_b * k_b - k_a * k_c
    hit = disc >= 0
    t = (k_b - np.sqrt(np.where(hit, disc, 0.0))) / k_a
    return np.where(hit & (t > NEAR), t, np.inf)


def ellipsoid_span(dx, dy, inv, g):
    """Entry and exit ray parameters (..., N) through N ellipsoids given ``inv = S^-1 R^T`` and ``g = inv @ c``
    (both NaN where the ray misses)."""
    e = [inv[:, i, 0] * dx + inv[:, i, 1] * dy + inv[:, i, 2] for i in range(3)]
    k_a = e[0] * e[0] + e[1] * e[1] + e[2] * e[2]
    k_b = e[0] * g[:, 0] + e[1] * g[:, 1] + e[2] * g[:, 2]
    k_c = (g * g).sum(1) - 1.0
    disc = k_b * k_b - k_a * k_c
    root = np.sqrt(np.where(disc >= 0, disc, np.nan))
    return (k_b - root) / k_a, (k_b + root) / k_a


class _Buffers:
    """The z-buffer and primitive-index buffer being filled."""

    def __init__(self, size: Tuple[int, int]):
        self.depth = np.full(size, np.inf)
        self.prim = np.full(size, -1, np.int32)

    def update(self, window: tuple, t: np.ndarray, index: np.ndarray) -> None:
        y0, y1, x0, x1 = window
        best = t.argmin(axis=2)
        t_best = np.take_along_axis(t, best[..., None], axis=2)[..., 0]
        zbuf = self.depth[y0:y1, x0:x1]
        closer = t_best < zbuf
        zbuf[closer] = t_best[closer]
        self.prim[y0:y1, x0:x1][closer] = index[best[closer]]


def _groups(prims: PrimitiveSet) -> Dict[tuple, Tuple[List[int], List[int]]]:
    groups: Dict[tuple, Tuple[List[int], List[int]]] = {}
    for i, meta in enumerate(prims.caps_meta):
        groups.setdefault((meta[3], meta[2]), ([], []))[0].append(i)
    for i, meta in enumerate(prims.ell_meta):
        groups.setdefault((meta[3], meta[2]), ([], []))[1].append(i)
    return groups


def _ellipsoid_inverse(prims: PrimitiveSet) -> Tuple[np.ndarray, np.ndarray]:
    rot = np.array(prims.ell_rot).reshape(-1, 3, 3)
    radii = np.array(prims.ell_radii).reshape(-1, 3)
    inv = np.transpose(rot, (0, 2, 1)) / radii[:, :, None]
    return inv, np.einsum('nij,nj->ni', inv, np.array(prims.ell_c).reshape(-1, 3))


def _primitive_arrays(prims: PrimitiveSet) -> dict:
    """The primitive parameters as arrays (capsule ends and radii, ellipsoid inverses, centres and extents)."""
    ell_inv, ell_g = _ellipsoid_inverse(prims)
    return dict(
        caps_a=np.array(prims.caps_a).reshape(-1, 3), caps_b=np.array(prims.caps_b).reshape(-1, 3),
        caps_r=np.array(prims.caps_r), ell_inv=ell_inv, ell_g=ell_g, ell_c=np.array(prims.ell_c).reshape(-1, 3),
        ell_ext=np.sqrt(((np.array(prims.ell_rot).reshape(-1, 3, 3) *
                          np.array(prims.ell_radii).reshape(-1, 1, 3))**2).sum(2)))


def _group_windows(prims: PrimitiveSet, arrays: dict, K: np.ndarray, size: Tuple[int, int]):
    """Yield ``(kind, ids, window)`` for each raster group and primitive kind whose image box is not empty."""
    for _, (cap_ids, ell_ids) in sorted(_groups(prims).items(), key=lambda kv: str(kv[0])):
        for ids, kind in ((cap_ids, 'capsule'), (ell_ids, 'ellipsoid')):
            if not ids:
                continue
            ids = np.array(ids)
            if kind == 'capsule':
                lo = np.minimum(arrays['caps_a'][ids], arrays['caps_b'][ids]) - arrays['caps_r'][ids, None]
                hi = np.maximum(arrays['caps_a'][ids], arrays['caps_b'][ids]) + arrays['caps_r'][ids, None]
            else:
                lo, hi = arrays['ell_c'][ids] - arrays['ell_ext'][ids], arrays['ell_c'][ids] + arrays['ell_ext'][ids]
            window = box_window(lo, hi, K, size)
            if window is not None:
                yield kind, ids, window


def _hit_t(kind: str, ids: np.ndarray, arrays: dict, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    if kind == 'capsule':
        return _capsule_t(dx, dy, arrays['caps_a'][ids], arrays['caps_b'][ids], arrays['caps_r'][ids])
    return _ellipsoid_t(dx, dy, arrays['ell_inv'][ids], arrays['ell_g'][ids])


def rasterise(prims: PrimitiveSet, K: np.ndarray, size: Tuple[int, int]) -> RasterResult:
    """Ray-cast ``prims`` (camera frame) with intrinsics ``K`` into an image of ``size = (H, W)``."""
    height, width = size
    dx_all = (np.arange(width) - K[0, 2]) / K[0, 0]
    dy_all = (np.arange(height) - K[1, 2]) / K[1, 1]
    buf = _Buffers(size)
    arrays = _primitive_arrays(prims)
    n_caps = prims.num_capsules
    for kind, ids, window in _group_windows(prims, arrays, K, size):
        y0, y1, x0, x1 = window
        t = _hit_t(kind, ids, arrays, dx_all[None, x0:x1, None], dy_all[y0:y1, None, None])
        buf.update(window, t, ids if kind == 'capsule' else ids + n_caps)
    fg = buf.prim >= 0
    ys, xs = np.nonzero(fg)
    t = buf.depth[ys, xs]
    p = np.stack([t * dx_all[xs], t * dy_all[ys], t], axis=1)
    normal = np.zeros(buf.depth.shape + (3, ))
    normal[ys, xs] = _surface_normals(p, buf.prim[ys, xs], prims, arrays)
    depth = np.where(fg, buf.depth, 0.0)
    return RasterResult(depth=depth, prim=buf.prim, normal=normal)


def rasterise_samples(prims: PrimitiveSet, K: np.ndarray, size: Tuple[int, int], u: np.ndarray,
                      v: np.ndarray) -> RasterResult:
    """Ray-cast ``prims`` at the sub-pixel image points ``(u, v)`` (flat arrays, pixel units) of an image of ``size``.

    Returns flat ``depth`` (inf on a miss, unlike :func:`rasterise`), ``prim`` and ``normal`` (M, 3).
    """
    dx, dy = (u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1]
    depth, prim = np.full(u.shape, np.inf), np.full(u.shape, -1, np.int32)
    arrays = _primitive_arrays(prims)
    n_caps = prims.num_capsules
    for kind, ids, (y0, y1, x0, x1) in _group_windows(prims, arrays, K, size):
        inside = np.nonzero((u >= x0 - 1) & (u < x1) & (v >= y0 - 1) & (v < y1))[0]
        if not len(inside):
            continue
        t = _hit_t(kind, ids, arrays, dx[inside, None], dy[inside, None])
        best = t.argmin(axis=1)
        t_best = t[np.arange(len(inside)), best]
        closer = t_best < depth[inside]
        depth[inside[closer]] = t_best[closer]
        prim[inside[closer]] = (ids if kind == 'capsule' else ids + n_caps)[best[closer]]
    hit = prim >= 0
    normal = np.zeros(u.shape + (3, ))
    p = np.stack([depth[hit] * dx[hit], depth[hit] * dy[hit], depth[hit]], axis=1)
    normal[hit] = _surface_normals(p, prim[hit], prims, arrays)
    return RasterResult(depth=depth, prim=prim, normal=normal)


def _surface_normals(p: np.ndarray, pid: np.ndarray, prims: PrimitiveSet, arrays: dict) -> np.ndarray:
    """Unit outward normals (N, 3) at the surface points ``p`` of the primitives ``pid``."""
    n = np.zeros_like(p)
    n_caps = prims.num_capsules
    is_cap = pid < n_caps
    if is_cap.any():
        ci = pid[is_cap]
        ba = arrays['caps_b'][ci] - arrays['caps_a'][ci]
        pa = p[is_cap] - arrays['caps_a'][ci]
        h = np.clip((pa * ba).sum(1) / (ba * ba).sum(1), 0.0, 1.0)
        n[is_cap] = pa - ba * h[:, None]
    if (~is_cap).any():
        ei = pid[~is_cap] - n_caps
        rot = np.array(prims.ell_rot)[ei]
        radii = np.array(prims.ell_radii)[ei]
        local = np.einsum('nji,nj->ni', rot, p[~is_cap] - np.array(prims.ell_c)[ei]) / radii**2
        n[~is_cap] = np.einsum('nij,nj->ni', rot, local)
    return n / np.linalg.norm(n, axis=1, keepdims=True)
