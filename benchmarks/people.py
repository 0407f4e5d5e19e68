"""People from all tasks at once, against SynthHumans' ground truth: per-person masks, 3D keypoints, flicker.

    OMP_NUM_THREADS=2 python benchmarks/people.py                 # 20 scenes of 2-3 people, the walk/crossing clips
    python benchmarks/people.py --scenes 50 --frames 30

The shipped tiny models (pose, seg, pointmap; ``sapiens2/demo_models``) run through ``Sapiens2Inferencer`` with the
ground-truth person boxes (as ``--bboxes`` does), and ``sapiens2.apis.people`` composes their results:

* masks: per-person IoU with the ground-truth instance (mean over people, and the worst person), for our masks (seg
  foreground split by the skeletons) beside two box-only baselines (the box itself; the seg foreground inside the
  box, not split between people), and the same split of the ground-truth foreground by the ground-truth keypoints
  (the assignment's own error);
* 3D keypoints: MPJPE and PA-MPJPE (per person, Procrustes with scale) in mm against the ground-truth 3D joints
  (camera frame) on the COCO-17 body keypoints that are visible in the truth and confident in the prediction, for
  ours beside the pointmap read at the raw 2D keypoint; and the ground-truth maps and keypoints through the same
  composition: the floor set by reading a surface where the truth is a joint centre inside the body;
* video: a still person (one frame of the walk clip under fresh sensor noise each frame) and the walk and crossing
  clips: mask flicker (share of a person's mask pixels that change from one frame to the next; on the moving clips
  the truth moves too), mask IoU, and the frame-to-frame acceleration of the 3D keypoints (jitter), without and with
  the per-track stabilisation and smoothing (the lag and error they cost shows in the IoU of the moving clips).
"""
import argparse
import os.path as osp
import sys
import time
from typing import Dict, List

import numpy as np

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)

from sapiens2.apis import Sapiens2Inferencer  # noqa: E402
from sapiens2.apis.people import PeopleComposer  # noqa: E402
from sapiens2.apis.people.assign import assign_masks, box_region  # noqa: E402
from sapiens2.apis.people.lift3d import lift_keypoints, sample_at_keypoints  # noqa: E402
from sapiens2.datasets.synthhumans.body import build_person  # noqa: E402
from sapiens2.datasets.synthhumans.generate import scene_for  # noqa: E402
from sapiens2.datasets.synthhumans.render import render_scene  # noqa: E402
from sapiens2.datasets.synthhumans.sequence import clip_scenes  # noqa: E402

COCO17 = ('nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear', 'left_shoulder', 'right_shoulder', 'left_elbow',
          'right_elbow', 'left_wrist', 'right_wrist', 'left_hip', 'right_hip', 'left_knee', 'right_knee', 'left_ankle',
          'right_ankle')
SIZE = (256, 192)


def truth_3d(scene, rendering) -> np.ndarray:
    """(N, 308, 3) ground-truth keypoints in the camera frame (metres)."""
    ext = rendering.extrinsic
    return np.stack([build_person(p).keypoints @ ext[:3, :3].T + ext[:3, 3] for p in scene.persons])


def gt_boxes(rendering) -> np.ndarray:
    b = rendering.bboxes
    return np.concatenate([b[:, :2], b[:, :2] + b[:, 2:] - 1], 1).astype(np.float32)


def gt_pointmap(rendering):
    depth, K = rendering.depth, rendering.K
    rows, cols = np.mgrid[:depth.shape[0], :depth.shape[1]]
    return np.stack([(cols - K[0, 2]) / K[0, 0] * depth, (rows - K[1, 2]) / K[1, 1] * depth, depth], -1), depth > 0


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = (a | b).sum()
    return float((a & b).sum() / union) if union else 1.0


def procrustes(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``pred`` (P, 3) aligned to ``truth`` by rotation, scale and translation (least squares)."""
    mp, mt = pred.mean(0), truth.mean(0)
    p, t = pred - mp, truth - mt
    u, s, vt = np.linalg.svd(p.T @ t)
    d = np.sign(np.linalg.det(u @ vt))
    s[-1] *= d
    u[:, -1] *= d
    rotation = u @ vt
    scale = s.sum() / (p ** 2).sum()
    return scale * p @ rotation + mt


class Errors:
    """MPJPE and PA-MPJPE (mm) accumulated per person."""

    def __init__(self) -> None:
        self.mpjpe: List[float] = []
        self.pa: List[float] = []
        self.count = 0

    def add(self, pred: np.ndarray, truth: np.ndarray, use: np.ndarray) -> None:
        use = use & ~np.isnan(pred).any(-1)
        if use.sum() < 4:
            return
        self.mpjpe.append(1000 * float(np.linalg.norm(pred[use] - truth[use], axis=-1).mean()))
        self.pa.append(1000 * float(np.linalg.norm(procrustes(pred[use], truth[use]) - truth[use], axis=-1).mean()))
        self.count += int(use.sum())

    def row(self) -> str:
        return f'{np.mean(self.mpjpe):.0f} | {np.mean(self.pa):.0f} | {self.count}'


def single_images(inferencer, composer, body: np.ndarray, num_scenes: int) -> None:
    masks_iou: Dict[str, List[float]] = dict(ours=[], box=[], box_fg=[], oracle=[], oracle_box=[])
    worst: Dict[str, List[float]] = {k: [] for k in masks_iou}
    errors = dict(ours=Errors(), naive=Errors(), oracle=Errors())
    index, used = 0, 0
    while used < num_scenes:
        scene = scene_for(0, 'val', index, SIZE)
        index += 1
        if len(scene.persons) < 2:
            continue
        rendering = render_scene(scene)
        if (rendering.areas == 0).any():
            continue
        used += 1
        boxes = gt_boxes(rendering)
        results = inferencer(rendering.image, bboxes=dict(array_000000=boxes.tolist()), show_progress=False)[0]
        people = composer.compose(rendering.image, results)
        truth_masks = [rendering.instance == n + 1 for n in range(len(boxes))]
        foreground = composer.foreground(results, SIZE)
        visible = (rendering.keypoints[..., 2] == 2).astype(np.float32)
        oracle_masks, _ = assign_masks(rendering.instance > 0, boxes, rendering.keypoints[..., :2], visible, 0.5,
                                       composer.links)
        candidates = dict(ours=people['masks'], box=[box_region(SIZE, b, 0) for b in boxes],
                          box_fg=[box_region(SIZE, b, 0) & foreground for b in boxes], oracle=oracle_masks,
                          oracle_box=[box_region(SIZE, b, 0) & (rendering.instance > 0) for b in boxes])
        for name, masks in candidates.items():
            scores = [iou(m, t) for m, t in zip(masks, truth_masks)]
            masks_iou[name] += scores
            worst[name].append(min(scores))
        truth = truth_3d(scene, rendering)
        pose = results['pose']
        confident = pose['keypoint_scores'] > composer.kpt_thr
        use = body & (rendering.keypoints[..., 2] == 2) & confident
        naive = sample_at_keypoints(results['pointmap']['pointmap'], results['pointmap']['valid'], pose['keypoints'],
                                    confident)
        pointmap, valid = gt_pointmap(rendering)
        oracle, _ = lift_keypoints(pointmap, valid, rendering.keypoints[..., :2], visible > 0,
                                   np.stack(truth_masks), K=rendering.K)
        for n in range(len(boxes)):
            both = use[n] & ~np.isnan(people['keypoints_3d'][n]).any(-1) & ~np.isnan(naive[n]).any(-1)
            errors['ours'].add(people['keypoints_3d'][n], truth[n], both)
            errors['naive'].add(naive[n], truth[n], both)
            errors['oracle'].add(oracle[n], truth[n], body & (visible[n] > 0))
    print(f'\n{used} validation scenes of 2-3 people (seed 0, {SIZE[0]}x{SIZE[1]}), {len(masks_iou["ours"])} people\n')
    print('| masks | mean IoU | worst person IoU (mean over scenes) |\n|---|---|---|')
    labels = dict(ours='ours: seg foreground split by the skeletons', box='baseline: the box',
                  box_fg='baseline: seg foreground inside the box', oracle='ground-truth foreground and keypoints, '
                  'our split', oracle_box='ground-truth foreground inside the box')
    for name, label in labels.items():
        print(f'| {label} | {np.mean(masks_iou[name]):.3f} | {np.mean(worst[name]):.3f} |')
    print('\n| 3D keypoints (COCO-17 body) | MPJPE mm | PA-MPJPE mm | keypoints |\n|---|---|---|---|')
    labels = dict(ours='ours: own-mask window, on the ray', naive='baseline: pointmap at the raw 2D keypoint',
                  oracle='ground-truth maps and keypoints, ours (surface vs joint centre)')
    for name, label in labels.items():
        print(f'| {label} | {errors[name].row()} |')


def clip(kind: str, frames: int):
    """Renderings of a clip; ``still``: the first frame of ``walk`` again and again under fresh sensor noise
    (sigma 3 grey levels), a person standing still."""
    scenes = clip_scenes('walk' if kind == 'still' else kind, frames, SIZE, seed=0)
    renderings = [render_scene(s) for s in (scenes[:1] if kind == 'still' else scenes)]
    if kind != 'still':
        return renderings, [r.image for r in renderings]
    rng = np.random.default_rng(0)
    noisy = [np.clip(renderings[0].image + rng.normal(0, 3, renderings[0].image.shape), 0, 255).astype(np.uint8)
             for _ in range(frames)]
    return renderings * frames, noisy


def video(inferencer, composer_factory, body: np.ndarray, frames: int) -> None:
    print('\n| clip | masks and 3D keypoints | mask flicker % | mask IoU | 3D jitter mm/frame^2 |')
    print('|---|---|---|---|---|')
    for kind in ('still', 'walk', 'crossing'):
        renderings, images = clip(kind, frames)
        boxes = [np.concatenate([r.keypoints[..., :2].min(1), r.keypoints[..., :2].max(1)], 1) for r in renderings]
        results = inferencer(images, bboxes={f'array_{t:06d}': b.tolist() for t, b in enumerate(boxes)},
                             show_progress=False)
        truth_flicker, rows = [], {}
        for stabilised in (False, True):
            composer = composer_factory()
            masks, points = [], []
            for t, (image, result) in enumerate(zip(images, results)):
                # identities: the boxes are given in person order and each frame keeps it
                result['pose']['track_ids'] = np.arange(len(boxes[t]))
                stream = ('clip', t, 10.0) if stabilised else None
                people = composer.compose(image, result, stream=stream)
                masks.append(people['masks'])
                points.append(people['keypoints_3d'])
            flicker, ious, jitter = [], [], []
            for n in range(len(boxes[0])):
                for t in range(1, frames):
                    truth = [renderings[s].instance == n + 1 for s in (t - 1, t)]
                    if truth[1].sum() < 50 or masks[t][n].sum() < 50:
                        continue
                    flicker.append((masks[t][n] ^ masks[t - 1][n]).sum() / masks[t][n].sum())
                    ious.append(iou(masks[t][n], truth[1]))
                    if not stabilised:
                        truth_flicker.append((truth[1] ^ truth[0]).sum() / truth[1].sum())
                track = np.stack([p[n] for p in points])[:, body]
                acceleration = track[2:] - 2 * track[1:-1] + track[:-2]
                jitter.append(1000 * np.nanmean(np.linalg.norm(acceleration, axis=-1)))
            rows[stabilised] = (100 * np.mean(flicker), np.mean(ious), np.nanmean(jitter))
        print(f'| {kind} | ground truth | {100 * np.mean(truth_flicker):.1f} | 1 | - |')
        for stabilised, label in ((False, 'per frame'), (True, 'stabilised / smoothed per track')):
            f, i, j = rows[stabilised]
            print(f'| {kind} | {label} | {f:.1f} | {i:.3f} | {j:.0f} |')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--scenes', type=int, default=20, help='validation scenes with 2 or more people')
    parser.add_argument('--frames', type=int, default=20, help='frames of each clip')
    args = parser.parse_args()
    start = time.time()
    inferencer = Sapiens2Inferencer(['pose-tiny', 'seg-tiny', 'pointmap-tiny'], device='cpu', dtype='fp32',
                                    task_options=dict(pose=dict(smooth=False)))  # the docs' figures are fp32
    names = [t for t in inferencer.tasks if t.name == 'pose'][0].keypoint_names()
    body = np.isin(names, COCO17)
    single_images(inferencer, PeopleComposer(inferencer.tasks), body, args.scenes)
    video(inferencer, lambda: PeopleComposer(inferencer.tasks), body, args.frames)
    print(f'\n({time.time() - start:.0f} s)')


if __name__ == '__main__':
    main()
