"""Print SynthHumans rendering throughput (images/s) at 256x192 on one core.

Usage: OMP_NUM_THREADS=1 python benchmarks/synthhumans.py [--num 100] [--size 256 192] [--write]

Rendering is single-threaded; images/s is computed from the process CPU time, so it is meaningful on a busy
machine, and the wall-clock figure is printed beside it.
"""
import argparse
import tempfile
import time

import cv2

from sapiens2.datasets.synthhumans import render_scene, scene_for
from sapiens2.datasets.synthhumans.writer import make_split_dirs, write_sample


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
    start, cpu_start = time.perf_counter(), time.process_time()
    renderings = [render_scene(s) for s in scenes]
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f'render: {args.num / cpu:.1f} images/s at {size[0]}x{size[1]} on one core '
          f'({1000 * cpu / args.num:.1f} ms CPU/image; wall clock {args.num / elapsed:.1f} images/s)')
    if args.write:
        with tempfile.TemporaryDirectory() as root:
            make_split_dirs(root, 'train')
            start = time.perf_counter()
            for i, r in enumerate(renderings):
                write_sample(root, 'train', f'{i:06d}', r)
            elapsed = time.perf_counter() - start
        print(f'write: {args.num / elapsed:.1f} images/s ({1000 * elapsed / args.num:.1f} ms/image)')


if __name__ == '__main__':
    main()
