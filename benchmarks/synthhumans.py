"""Print SynthHumans rendering throughput (images/s) at 256x192 on one core, for full sets and RGB-only sets.

Usage: OMP_NUM_THREADS=1 python benchmarks/synthhumans.py [--num 100] [--size 256 192] [--write]

Rendering is single-threaded; images/s is computed from the process CPU time, so it is meaningful on a busy
machine, and the wall-clock figure is printed beside it. ``render_image`` (RGB-only sets, ``rgb_only=True``) skips
the keypoints and the label maps; ``--write`` also times writing the files and prints their size on disk.
"""
import argparse
import os
import os.path as osp
import tempfile
import time

import cv2

from sapiens2.datasets.synthhumans import render_image, render_scene, scene_for
from sapiens2.datasets.synthhumans.writer import make_split_dirs, write_image, write_sample


def _timed(fn, items) -> tuple:
    start, cpu_start = time.perf_counter(), time.process_time()
    out = [fn(item) for item in items]
    return out, time.process_time() - cpu_start, time.perf_counter() - start


def _folder_bytes(root: str) -> int:
    return sum(osp.getsize(osp.join(d, f)) for d, _, files in os.walk(root) for f in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--num', type=int, default=100)
    parser.add_argument('--size', type=int, nargs=2, default=(256, 192), metavar=('H', 'W'))
    parser.add_argument('--write', action='store_true', help='also time writing every file to a temporary folder')
    args = parser.parse_args()
    cv2.setNumThreads(1)
    size = tuple(args.size)
    scenes = [scene_for(0, 'train', i, size) for i in range(args.num)]
    render_scene(scenes[0])
    results = {}
    for mode, fn in (('render', render_scene), ('render_image (RGB only)', render_image)):
        results[mode], cpu, elapsed = _timed(fn, scenes)
        print(f'{mode}: {args.num / cpu:.1f} images/s at {size[0]}x{size[1]} on one core '
              f'({1000 * cpu / args.num:.1f} ms CPU/image; wall clock {args.num / elapsed:.1f} images/s)')
    if args.write:
        writers = (('write (all maps)', results['render'], write_sample),
                   ('write (RGB only)', results['render_image (RGB only)'], write_image))
        for mode, items, writer in writers:
            with tempfile.TemporaryDirectory() as root:
                make_split_dirs(root, 'train', rgb_only=writer is write_image)
                start = time.perf_counter()
                for i, item in enumerate(items):
                    writer(root, 'train', f'{i:06d}', item)
                elapsed = time.perf_counter() - start
                kib = _folder_bytes(root) / 1024 / args.num
            print(f'{mode}: {args.num / elapsed:.1f} images/s ({1000 * elapsed / args.num:.1f} ms/image), '
                  f'{kib:.0f} KiB/image on disk')


if __name__ == '__main__':
    main()
