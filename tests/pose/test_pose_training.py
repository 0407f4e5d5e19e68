"""The tiny SynthHumans pose config trains with tools/train.py and beats an untrained model and a constant guess."""
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mmengine.config import Config
from mmengine.runner import Runner
from mmpose.evaluation.functional import keypoint_pck_accuracy

from sapiens2.datasets.pose import Keypoints308CocoDataset

ROOT = Path(__file__).resolve().parents[2]
TINY = 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
TRAIN_TIMEOUT_S = 900  # wall clock, generous for a loaded machine; the time is printed, not asserted


def data_options(root: str) -> list:
    return [f'{split}_dataloader.dataset.data_root={root}' for split in ('train', 'val', 'test')]


def last_val_metrics(work_dir: Path) -> dict:
    """The last logged line holding validation metrics (MMEngine's vis_data/scalars.json)."""
    lines = [json.loads(x) for f in work_dir.glob('*/vis_data/scalars.json') for x in f.read_text().splitlines()]
    val = [x for x in lines if 'PCK' in x]
    assert val, f'no validation metrics in {work_dir}'
    return val[-1]


def train(root: str, work_dir: Path) -> dict:
    cmd = [sys.executable, 'tools/train.py', TINY, '--work-dir', str(work_dir), '--cfg-options', *data_options(root)]
    env = dict(os.environ, OMP_NUM_THREADS='1')
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TRAIN_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return last_val_metrics(work_dir)


def untrained_metrics(root: str, work_dir: Path) -> dict:
    cfg = Config.fromfile(str(ROOT / TINY))
    cfg.merge_from_dict(dict(work_dir=str(work_dir), **{o.split('=')[0]: root for o in data_options(root)}))
    runner = Runner.from_cfg(cfg)
    runner.model.init_weights()
    return runner.test()


def constant_predictor_pck(root: str) -> float:
    """PCK@0.05 of the best constant guess: every keypoint at its mean (or median) box-normalised train position."""
    def boxes_and_keypoints(split):
        ds = Keypoints308CocoDataset(ann_file=f'annotations/keypoints308_{split}.json', data_root=root,
                                     data_prefix=dict(img=''))
        infos = [ds.get_data_info(i) for i in range(len(ds))]
        boxes = np.concatenate([d['bbox'] for d in infos])  # (N, 4) xyxy
        kpts = np.concatenate([d['keypoints'] for d in infos])  # (N, K, 2)
        vis = np.concatenate([d['keypoints_visible'] for d in infos]) > 0  # (N, K)
        return boxes, kpts, vis

    boxes, kpts, vis = boxes_and_keypoints('train')
    size = (boxes[:, 2:] - boxes[:, :2])[:, None]
    norm = np.where(vis[..., None], (kpts - boxes[:, None, :2]) / size, np.nan)
    boxes, kpts, vis = boxes_and_keypoints('val')
    size = (boxes[:, 2:] - boxes[:, :2])[:, None]
    scores = []
    for guess in (np.nanmean(norm, axis=0), np.nanmedian(norm, axis=0)):
        pred = boxes[:, None, :2] + np.nan_to_num(guess, nan=0.5)[None] * size
        norm_factor = np.repeat(size.max(axis=2), 2, axis=1)
        scores.append(keypoint_pck_accuracy(pred, kpts, vis, 0.05, norm_factor)[1])
    return max(scores)


@pytest.mark.slow
def test_tiny_pose_trains_on_synthhumans(synthhumans_root, tmp_path):
    start, cpu_start = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    trained = train(synthhumans_root, tmp_path / 'train')
    train_s = time.time() - start
    cpu_end = resource.getrusage(resource.RUSAGE_CHILDREN)
    train_cpu_s = (cpu_end.ru_utime - cpu_start.ru_utime) + (cpu_end.ru_stime - cpu_start.ru_stime)
    untrained = untrained_metrics(synthhumans_root, tmp_path / 'untrained')
    constant = constant_predictor_pck(synthhumans_root)
    # COCO AP is reported, not asserted: with the 308 sigmas (0.01 for the 238 face points) a person counts as found
    # only when face points are within ~1 px, which this tiny model does not reach.
    print(f'\npose tiny: trained PCK@0.05 {trained["PCK"]:.3f} AP {trained["coco/AP"]:.3f} '
          f'body AP {trained["body/coco/AP"]:.3f} | untrained PCK {untrained["PCK"]:.3f} '
          f'AP {untrained["coco/AP"]:.3f} | constant PCK {constant:.3f} '
          f'| train+val {train_s:.0f} s wall, {train_cpu_s:.0f} s CPU')
    assert trained['PCK'] >= untrained['PCK'] + 0.3
    # Measured through tools/train.py with the patch-8 recipe: 0.45-0.49 vs the constant 0.37 (the patch-16 recipe
    # reached only 0.39-0.40); the margin leaves room for run-to-run noise.
    assert trained['PCK'] >= constant + 0.06
