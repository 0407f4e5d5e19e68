"""Pose on video: the accuracy gained by One-Euro smoothing, and the throughput cost of tracking and smoothing.

    OMP_NUM_THREADS=2 python benchmarks/video.py                       # pose-tiny (shipped) and the 0.1b (random)
    python benchmarks/video.py --models tiny --frames 90 --fps 30 --size 240 320 --repeats 3

A SynthHumans clip of two people crossing (``sapiens2.datasets.synthhumans.sequence``, rendered at ``--size``, written
as a lossless AVI) goes through ``Sapiens2Inferencer`` with the ground-truth person boxes of each frame, as
``sapiens2-infer clip.avi --bboxes`` does:

* accuracy (pose-tiny, the shipped weights): against the ground-truth keypoints (those inside the image), the mean
  keypoint error and the error of the frame-to-frame acceleration (``x[t+1] - 2 x[t] + x[t-1]``, jitter), without
  and with smoothing (the video-file default: two-sided, and the causal filter of live input: constant-velocity
  Kalman, beside the causal One-Euro filter); goals: acceleration error down at least 3x, mean error at most 10 %
  above unsmoothed;
* throughput: frames/s with tracking and smoothing (the default for videos) and without (``track=False``), the runs
  interleaved and repeated, median; goal: overhead at most 5 %. All person crops of a frame go through the model in
  one forward (checked by counting the forwards).
"""
import argparse
import os
import os.path as osp
import statistics
import tempfile
import time

import numpy as np
import torch

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
TINY_CONFIG = osp.join(ROOT, 'configs/pose/sapiens2_tiny_pose_synthhumans-256x192.py')
TINY_WEIGHTS = osp.join(ROOT, 'sapiens2/demo_models/sapiens2_tiny_pose_synthhumans-256x192.safetensors')


def ground_truth_boxes(clip, name: str) -> dict:
    """{frame name: [[x1, y1, x2, y2], ...]} in identity order (the inferencer's ``bboxes``)."""
    from sapiens2.apis.io.sources import frame_name
    return {frame_name(name, t): boxes.tolist() for t, boxes in enumerate(clip.bboxes)}


def build_task(model: str, device: str):
    from sapiens2.apis import Sapiens2Inferencer
    if model == 'tiny':
        # fp32: the figures in the docs (the default is auto)
        return Sapiens2Inferencer(TINY_CONFIG, TINY_WEIGHTS, device=device, dtype='fp32').tasks[0]
    directory = tempfile.mkdtemp()
    config = osp.join(directory, 'sapiens2_0.1b_pose-256x192.py')
    with open(config, 'w') as f:
        f.write(f"_base_ = [{TINY_CONFIG!r}]\nmodel = dict(backbone=dict(arch='sapiens2_0.1b'), "
                "head=dict(in_channels=768))\n")
    return Sapiens2Inferencer(config, device=device, dtype='fp32').tasks[0]


def run(task, video: str, boxes: dict, track: bool, options=None) -> list:
    """Per frame, the pose result (keypoints in identity order: the boxes are given in that order); ``options``
    replace the task's stream options."""
    from sapiens2.apis import Sapiens2Inferencer
    saved = task.stream_options
    if not track:
        task.stream_options = None
    elif options is not None:
        task.stream_options = options
    try:
        results = Sapiens2Inferencer.from_tasks([task])(video, bboxes=boxes, show_progress=False)
    finally:
        task.stream_options = saved
    return [r['pose'] for r in results]


def errors(results: list, clip) -> tuple:
    """(mean keypoint error, mean acceleration error) in pixels over the keypoints inside the image."""
    pred = np.stack([r['keypoints'] for r in results])  # (T, N, K, 2)
    truth, inside = clip.keypoints[..., :2], clip.keypoints[..., 2] > 0
    position = np.linalg.norm(pred - truth, axis=-1)[inside].mean()
    accel_ok = inside[2:] & inside[1:-1] & inside[:-2]
    accel = np.linalg.norm(np.diff(pred, 2, axis=0) - np.diff(truth, 2, axis=0), axis=-1)[accel_ok].mean()
    return float(position), float(accel)


def accuracy(task, video: str, boxes: dict, clip) -> None:
    from sapiens2.apis.pose_video.stream import StreamOptions
    raw_pos, raw_acc = errors(run(task, video, boxes, track=False), clip)
    results = run(task, video, boxes, track=True)
    ids = np.stack([r['track_ids'] for r in results])
    print(f'accuracy (pose-tiny, {len(results)} frames, {ids.shape[1]} people, track ids per person '
          f'{[sorted(set(col)) for col in ids.T]}):')
    print(f'  unsmoothed: acceleration error {raw_acc:.2f} px, mean keypoint error {raw_pos:.2f} px')
    causal = run(task, video, boxes, track=True, options=StreamOptions(lag=0))
    one_euro = run(task, video, boxes, track=True, options=StreamOptions(lag=0, min_cutoff=1.0, beta=1.5))
    for name, smoothed in (('two-sided (video default)', results), ('causal (live default, Kalman)', causal),
                           ('causal One-Euro (min cut-off 1, beta 1.5)', one_euro)):
        pos, acc = errors(smoothed, clip)
        print(f'  {name}: acceleration error {acc:.2f} px, {raw_acc / acc:.2f}x lower (goal >= 3x); mean keypoint '
              f'error {pos:.2f} px, {100 * (pos / raw_pos - 1):+.1f} % (goal <= +10 %)')


def throughput(name: str, task, video: str, boxes: dict, frames: int, repeats: int) -> None:
    forwards = []
    hook = task.model.register_forward_pre_hook(lambda module, args: forwards.append(1))
    run(task, video, boxes, track=True)  # warm-up, and the count of forwards
    hook.remove()
    rates = {True: [], False: []}
    for _ in range(repeats):
        for track in (False, True):
            start = time.perf_counter()
            run(task, video, boxes, track)
            rates[track].append(frames / (time.perf_counter() - start))
    plain, tracked = statistics.median(rates[False]), statistics.median(rates[True])
    crops = sum(len(b) for b in boxes.values())
    print(f'{name:5s} {plain:10.2f} {tracked:12.2f} {tracked / plain:7.3f} {100 * (1 - tracked / plain):+8.1f} % '
          f'  {len(forwards)} forwards for {frames} frames / {crops} crops')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--models', nargs='+', choices=('tiny', '0.1b'), default=['tiny', '0.1b'])
    parser.add_argument('--frames', type=int, default=90)
    parser.add_argument('--fps', type=float, default=30.0, help='frame rate the motion is sampled at')
    parser.add_argument('--size', type=int, nargs=2, default=(240, 320), metavar=('H', 'W'))
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    args = parser.parse_args()
    from sapiens2.datasets.synthhumans.sequence import render_clip, write_clip
    start = time.perf_counter()
    clip = render_clip('crossing', args.frames, tuple(args.size), seed=0, fps=args.fps)
    print(f'clip: two people crossing, {args.frames} frames {args.size[0]}x{args.size[1]} at {clip.fps:g} frames/s, '
          f'rendered in {time.perf_counter() - start:.1f} s; device {args.device}, {torch.get_num_threads()} threads, '
          f'load average {os.getloadavg()[0]:.1f}')
    with tempfile.TemporaryDirectory() as directory:
        video = write_clip(clip, osp.join(directory, 'crossing.avi'))
        boxes = ground_truth_boxes(clip, 'crossing')
        tasks = {name: build_task(name, args.device) for name in args.models}
        if 'tiny' in tasks:
            accuracy(tasks['tiny'], video, boxes, clip)
        print(f'throughput (median of {args.repeats} interleaved repeats):')
        print(f'{"model":5s} {"plain f/s":>10s} {"tracked f/s":>12s} {"ratio":>7s} {"overhead":>10s}')
        for name, task in tasks.items():
            throughput(name, task, video, boxes, args.frames, args.repeats)


if __name__ == '__main__':
    main()
