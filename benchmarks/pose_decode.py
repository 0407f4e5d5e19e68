"""mmpose's UDP + DARK decode versus the batched torch decode (``FastUDPHeatmap``), on one CPU thread.

Usage: python benchmarks/pose_decode.py [--instances 8] [--repeats 5] [--keypoints 308] [--threads 1]

Heatmaps are 256x192 (the 1024x768 models' output): a sigma-6 Gaussian per keypoint at a random sub-pixel spot
with random amplitude, plus low noise. Prints the median time per instance of each decoder, the speed-up, the
largest coordinate difference, and the time of one plain read of the heatmaps (``sum``): the fast decode reads them
once, so mmpose's time over that read is the ceiling of any speed-up on this machine.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch
from mmpose.codecs import UDPHeatmap

from sapiens2.codecs import FastUDPHeatmap

INPUT_SIZE, HEATMAP_SIZE = (768, 1024), (192, 256)


def synthetic_heatmaps(instances: int, keypoints: int, seed: int = 0) -> np.ndarray:
    """(N, K, 256, 192) float32 Gaussian heatmaps (sigma 6) with amplitude 0.2-1 and noise 0.01."""
    rng = np.random.default_rng(seed)
    width, height = HEATMAP_SIZE
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    centres = rng.uniform([0, 0], [width - 1, height - 1], size=(instances, keypoints, 2)).astype(np.float32)
    amplitude = rng.uniform(0.2, 1.0, size=(instances, keypoints, 1, 1)).astype(np.float32)
    d2 = (xs - centres[..., 0, None, None])**2 + (ys - centres[..., 1, None, None])**2
    heatmaps = amplitude * np.exp(-d2 / (2 * 6.0**2))
    return (heatmaps + rng.normal(0, 0.01, heatmaps.shape).astype(np.float32)).astype(np.float32)


def timed_ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description='Benchmark UDP heatmap decoding')
    parser.add_argument('--instances', type=int, default=8)
    parser.add_argument('--keypoints', type=int, default=308)
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--threads', type=int, default=1, help='torch / OpenCV threads')
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import cv2
    cv2.setNumThreads(args.threads)

    kwargs = dict(input_size=INPUT_SIZE, heatmap_size=HEATMAP_SIZE, sigma=6)
    reference, fast = UDPHeatmap(**kwargs), FastUDPHeatmap(**kwargs)
    heatmaps = synthetic_heatmaps(args.instances, args.keypoints)
    batch = torch.from_numpy(heatmaps)
    runs = dict(mmpose=lambda: [reference.decode(h) for h in heatmaps], fast=lambda: fast.batch_decode(batch),
                read=lambda: batch.sum())
    for fn in runs.values():
        fn()
    times = {name: [] for name in runs}
    for _ in range(args.repeats):  # interleaved, so that load changes hit every decoder alike
        for name, fn in runs.items():
            times[name].append(timed_ms(fn) / args.instances)
    ref_kpts = np.concatenate([reference.decode(h)[0] for h in heatmaps])
    fast_kpts = np.concatenate(fast.batch_decode(batch)[0])
    diff = float(np.abs(ref_kpts - fast_kpts).max())
    med = {name: statistics.median(t) for name, t in times.items()}
    speedup = statistics.median([r / f for r, f in zip(times['mmpose'], times['fast'])])
    ceiling = statistics.median([r / b for r, b in zip(times['mmpose'], times['read'])])
    mb = heatmaps[0].nbytes / 2**20

    print(f'{args.instances} instances x {args.keypoints} keypoints, heatmaps {HEATMAP_SIZE[1]}x{HEATMAP_SIZE[0]}, '
          f'{args.threads} thread(s), median of {args.repeats} interleaved repeats, load average '
          f'{os.getloadavg()[0]:.1f}')
    print(f'  mmpose UDPHeatmap.decode:     {med["mmpose"]:8.2f} ms / instance')
    print(f'  FastUDPHeatmap.batch_decode:  {med["fast"]:8.2f} ms / instance')
    print(f'  one read of the heatmaps:     {med["read"]:8.2f} ms / instance ({mb:.0f} MiB, '
          f'{mb / med["read"] * 1e3 / 1024:.1f} GiB/s; a decode cannot be faster)')
    print(f'  speed-up: {speedup:.1f}x (ceiling at this memory bandwidth: {ceiling:.1f}x)   '
          f'max |coordinate difference|: {diff:.2e} px')
    return 0


if __name__ == '__main__':
    sys.exit(main())
