"""Batched, vectorised UDP + DARK-UDP heatmap decoding in torch.

Reproduces mmpose 1.3.2's ``UDPHeatmap.decode`` (argmax, then ``refine_keypoints_dark_udp``) for a whole batch of
instances at once, on the heatmaps' device, without blurring whole heatmaps.

The DARK step only reads the blurred log-heatmap at seven pixels around each argmax, so this module gathers one
13x13 patch per keypoint and blurs just that, instead of blurring all K x H x W values. mmpose rescales
each blurred map so its maximum equals the raw maximum before clipping to [1e-3, 50] and taking the log; that scale
adds the same constant to all seven log values and cancels in the finite differences. It only matters when a value
could be clipped, so the blurred maximum of a map is computed (by a full separable blur) only for the few keypoints
where clipping is possible or whose maximum is not positive (mmpose's ``-1`` locations, whose flat-index look-ups
wrap into the previous keypoint's map; reproduced as well).

Keypoints whose maximum is <= 0 have no meaningful location in mmpose either: after the wrapped look-ups their
y Hessian is ~0, so mmpose's y step is float rounding noise divided by ~1e-7; only their x matches mmpose's.
"""
from typing import Sequence, Tuple

import torch
from torch import Tensor

CLIP_MIN, CLIP_MAX = 1e-3, 50.0
#: The largest DARK step (heatmap pixels) trusted. On a low, nearly flat peak the log-Hessian is near singular and
#: mmpose's Newton step runs off (2^18 px seen with the tiny pose model in bf16; in fp32 a point decoded 1300 px
#: outside a 120 px image of noise, where ONNX Runtime's last digits moved it by 8 px); beyond this the integer
#: maximum is kept. Every step up to it is mmpose's, unchanged.
MAX_DARK_STEP = 4.0
EPS_F32 = float(torch.finfo(torch.float32).eps)


def gaussian_kernel1d(kernel_size: int, dtype: torch.dtype = torch.float32, device=None) -> Tensor:
    """The 1-D kernel of ``cv2.GaussianBlur(img, (k, k), 0)`` (sigma derived from the size as OpenCV does)."""
    if kernel_size % 2 != 1:
        raise ValueError(f'blur kernel size must be odd, got {kernel_size}')
    sigma = 0.3 * ((kernel_size - 1) * 0.5 - 1) + 0.8
    x = torch.arange(kernel_size, dtype=torch.float64) - (kernel_size - 1) / 2
    k = torch.exp(-x**2 / (2 * sigma**2))
    return (k / k.sum()).to(dtype=dtype, device=device)


# Signed integers of the float widths: positive IEEE floats order like their bit patterns read as these.
_SAME_WIDTH_INT = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
                   torch.float64: torch.int64}


def heatmap_argmax(heatmaps: Tensor) -> Tuple[Tensor, Tensor]:
    """Integer (x, y) of each map's first maximum, -1 where the maximum is <= 0, and the maxima.

    Args:
        heatmaps: (N, K, H, W).
    Returns:
        locs (N, K, 2) float32 and vals (N, K).
    """
    N, K, H, W = heatmaps.shape
    # The maximum is searched on the bits read as signed integers, which torch reduces about 1.4x faster than
    # floats (no NaN handling). Positive floats keep their order and every positive float is above every negative
    # one, so where a map's maximum is positive this finds the same first maximum; the other maps (no location in
    # mmpose either) get their float maximum computed exactly. Two-stage (row maxima, the first row holding the
    # maximum, then its first column): the flat argmax's first maximum in one pass over the data.
    bits = heatmaps.view(_SAME_WIDTH_INT.get(heatmaps.dtype, heatmaps.dtype))
    vals_bits, y = bits.amax(dim=-1).max(dim=-1)
    row = bits.gather(2, y[..., None, None].expand(N, K, 1, W))[:, :, 0]
    x = row.argmax(dim=-1)
    vals = vals_bits.view(heatmaps.dtype)
    locs = torch.stack((x, y), dim=-1).to(torch.float32)
    invalid = vals <= 0
    if bool(invalid.any()):  # only these maps are read again
        vals[invalid] = heatmaps[invalid].flatten(1).amax(dim=-1)
        locs[invalid] = -1
    return locs, vals


def _blur_at(maps: Tensor, map_idx: Tensor, ys: Tensor, xs: Tensor, kernel: Tensor) -> Tensor:
    """Value of the zero-padded Gaussian blur of ``maps[map_idx]`` at pixels (ys, xs); all index tensors alike."""
    _, H, W = maps.shape
    r = kernel.numel() // 2
    off = torch.arange(-r, r + 1, device=maps.device)
    yy = ys[..., None, None] + off[:, None]
    xx = xs[..., None, None] + off[None, :]
    inside = (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
    flat = (map_idx[..., None, None] * H + yy.clamp(0, H - 1)) * W + xx.clamp(0, W - 1)
    window = torch.take(maps, flat) * inside
    return torch.einsum('...ij,i,j->...', window, kernel, kernel)


def _banded(size: int, kernel: Tensor) -> Tensor:
    """(size, size) matrix applying a 1-D kernel with zero padding: (G @ v)[i] = sum_j kernel[j - i + r] v[j]."""
    r = kernel.numel() // 2
    offset = torch.arange(size, device=kernel.device)[None, :] - torch.arange(size, device=kernel.device)[:, None]
    return torch.where(offset.abs() <= r, kernel[(offset + r).clamp(0, 2 * r)], torch.zeros((), device=kernel.device))


def _full_blur_max(maps: Tensor, kernel: Tensor) -> Tensor:
    """Maximum of the zero-padded separable Gaussian blur of each map (M, H, W) -> (M,), as two matrix products."""
    _, H, W = maps.shape
    blurred = _banded(H, kernel) @ maps @ _banded(W, kernel).T
    return blurred.flatten(1).amax(dim=1)


# The 7 pixels (dx, dy) mmpose reads around each maximum: centre, x+1, y+1, x+1 y+1, x-1 y-1, x-1, y-1.
STENCIL_DX = (0, 1, 0, 1, -1, -1, 0)
STENCIL_DY = (0, 0, 1, 1, -1, 0, -1)


def _blur_stencil(maps: Tensor, locs: Tensor, kernel: Tensor) -> Tensor:
    """Blurred values (N, K, 7) at the stencil around valid integer locations (N, K, 2), with mmpose's edge
    replication (pixels are clamped to the map). Gathers one (2r+3)^2 patch per keypoint and blurs it separably."""
    N, K = locs.shape[:2]
    _, H, W = maps.shape
    r, device = kernel.numel() // 2, maps.device
    x, y = locs[..., 0].long().clamp(0, W - 1), locs[..., 1].long().clamp(0, H - 1)
    off = torch.arange(-r - 1, r + 2, device=device)
    yy, xx = y[..., None] + off, x[..., None] + off
    base = torch.arange(N * K, device=device).view(N, K) * (H * W)
    rows = base[..., None] + yy.clamp(0, H - 1) * W
    patch = torch.take(maps, rows[..., :, None] + xx.clamp(0, W - 1)[..., None, :])
    band = _banded(off.numel(), kernel)[r:r + 3]  # rows of the 3 centre offsets -1, 0, 1
    # Zero padding: pixels outside the map get weight 0 (their clamped look-ups are ignored).
    band_y = band * ((yy >= 0) & (yy < H)).to(band.dtype)[..., None, :]
    band_x = band * ((xx >= 0) & (xx < W)).to(band.dtype)[..., None, :]
    blurred = band_y @ patch @ band_x.transpose(-1, -2)  # (N, K, 3, 3), indexed [dy + 1, dx + 1]
    dx = torch.tensor(STENCIL_DX, device=device)
    dy = torch.tensor(STENCIL_DY, device=device)
    ox = (x[..., None] + dx).clamp(0, W - 1) - x[..., None] + 1
    oy = (y[..., None] + dy).clamp(0, H - 1) - y[..., None] + 1
    return blurred.flatten(-2).gather(-1, oy * 3 + ox)


def _blur_wrapped(maps: Tensor, n: Tensor, k: Tensor, K: int, kernel: Tensor) -> Tuple[Tensor, Tensor]:
    """Stencil values and their map indices for keypoints whose maximum is <= 0 (location -1, -1).

    mmpose indexes the edge-padded maps flattened per instance, so such a keypoint reads its own map's corner
    (0, 0) four times and, for the three negative offsets, the previous map's padded (H, W+1), (H+1, W+1), (H+1, 0),
    i.e. its pixels (H-1, W-1), (H-1, W-1), (H-1, 0) (the first keypoint wraps to the last map).
    """
    _, H, W = maps.shape
    own, prev = n * K + k, n * K + (k - 1) % K
    map_idx = torch.stack([own] * 4 + [prev] * 3, dim=-1)
    ys = torch.tensor([0, 0, 0, 0, H - 1, H - 1, H - 1], device=maps.device).expand_as(map_idx)
    xs = torch.tensor([0, 0, 0, 0, W - 1, W - 1, 0], device=maps.device).expand_as(map_idx)
    return _blur_at(maps, map_idx, ys, xs, kernel), map_idx


def _newton_offset(v: Tensor) -> Tensor:
    """One DARK Newton step from the 7 log values (..., 7) -> (..., 2) offset (x, y) to subtract."""
    i_, ix1, iy1, ix1y1, ix1_y1_, ix1_, iy1_ = v.unbind(-1)
    dx = 0.5 * (ix1 - ix1_)
    dy = 0.5 * (iy1 - iy1_)
    dxx = ix1 - 2 * i_ + ix1_
    dyy = iy1 - 2 * i_ + iy1_
    dxy = 0.5 * (ix1y1 - ix1 - iy1 + i_ + i_ - ix1_ - iy1_ + ix1_y1_)
    hi_dtype = torch.float32 if v.device.type == 'mps' else torch.float64
    a, b, d = dxx.to(hi_dtype) + EPS_F32, dxy.to(hi_dtype), dyy.to(hi_dtype) + EPS_F32
    det = a * d - b * b
    gx, gy = dx.to(hi_dtype), dy.to(hi_dtype)
    return torch.stack(((d * gx - b * gy) / det, (a * gy - b * gx) / det), dim=-1)


def refine_dark_udp(heatmaps: Tensor, locs: Tensor, vals: Tensor, blur_kernel_size: int = 11) -> Tensor:
    """DARK-UDP refinement of integer locations (N, K, 2) on heatmaps (N, K, H, W); returns refined (N, K, 2)."""
    N, K, H, W = heatmaps.shape
    device = heatmaps.device
    maps = heatmaps.reshape(N * K, H, W).float()
    kernel = gaussian_kernel1d(blur_kernel_size, device=device)
    blurred = _blur_stencil(maps, locs, kernel)
    map_idx = torch.arange(N * K, device=device).view(N, K, 1).expand(N, K, 7).clone()
    invalid = vals <= 0
    if bool(invalid.any()):
        n, k = invalid.nonzero(as_tuple=True)
        blurred[n, k], map_idx[n, k] = _blur_wrapped(maps, n, k, K, kernel)

    # Without clipping, mmpose's per-map rescaling adds the same log constant to all 7 values and cancels.
    safe = ~invalid & (vals <= CLIP_MAX) & (blurred.amin(-1) >= CLIP_MIN)
    logv = blurred.clamp_min(CLIP_MIN).log()
    if not bool(safe.all()):
        need = map_idx[~safe].unique()
        scale = torch.ones(N * K, device=device)
        scale[need] = vals.reshape(N * K)[need].float() / _full_blur_max(maps[need], kernel)
        exact = (blurred * scale[map_idx]).clamp(CLIP_MIN, CLIP_MAX).log()
        logv = torch.where(safe[..., None], logv, exact)
    offset = _newton_offset(logv)
    return (locs.to(offset.dtype) - offset).to(torch.float32)


def udp_dark_decode(heatmaps: Tensor,
                    input_size: Sequence[int],
                    blur_kernel_size: int = 11) -> Tuple[Tensor, Tensor]:
    """Decode UDP Gaussian heatmaps like mmpose's ``UDPHeatmap.decode``, batched.

    Args:
        heatmaps: (N, K, H, W) heatmaps of N instances (any float dtype, any device).
        input_size: model input size (w, h).
        blur_kernel_size: DARK blur kernel size (mmpose default 11).
    Returns:
        keypoints (N, K, 2) float32 in input-image pixels and scores (N, K) (the raw heatmap maxima).
    """
    if heatmaps.ndim != 4:
        raise ValueError(f'expected heatmaps of shape (N, K, H, W), got {tuple(heatmaps.shape)}')
    heatmaps = heatmaps.detach()
    _, _, H, W = heatmaps.shape
    locs, vals = heatmap_argmax(heatmaps)
    keypoints = refine_dark_udp(heatmaps, locs, vals, blur_kernel_size)
    runaway = ((keypoints - locs).abs() > MAX_DARK_STEP).any(-1, keepdim=True)
    keypoints = torch.where(runaway, locs.to(keypoints.dtype), keypoints)
    factor = torch.tensor([input_size[0] / (W - 1), input_size[1] / (H - 1)], device=heatmaps.device)
    return keypoints * factor, vals.float()
