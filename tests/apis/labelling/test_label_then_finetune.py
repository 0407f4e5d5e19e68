"""The loop of docs/inference.md, "labelling a dataset": label a folder with a larger model, then train a small one
on the labels. pose-tiny labels the people the person finder finds in 32 SynthHumans images; the nano pose config
trains on the COCO keypoint file the job merged and then beats its untrained self on those labels."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mmengine.config import Config
from mmengine.runner import Runner

from sapiens2.apis.cli import main

ROOT = Path(__file__).resolve().parents[3]
NANO = 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
IMAGES, ITERS = 32, 80


def label_data_options(ann_file: Path) -> dict:
    """Config keys: the labels as the training and validation data, a short schedule."""
    options = {f'{split}_dataloader.dataset.{key}': value for split in ('train', 'val', 'test')
               for key, value in (('data_root', ''), ('ann_file', str(ann_file)))}
    return dict(options, **{'train_cfg.max_iters': ITERS, 'train_cfg.val_interval': ITERS,
                            'default_hooks.checkpoint.interval': ITERS})


@pytest.mark.slow
def test_pose_tiny_labels_train_a_nano_model_that_beats_its_untrained_self(synthhumans_root, tmp_path, capsys):
    images = sorted((Path(synthhumans_root) / 'val' / 'rgb').glob('*.png'))[:IMAGES]
    listing = tmp_path / 'images.txt'
    listing.write_text(''.join(f'{path}\n' for path in images))
    out = tmp_path / 'labels'
    assert main([str(listing), '--model', 'pose-tiny', '--out', str(out), '--launcher', 'none', '--device', 'cpu',
                 '--no-vis', '--quiet']) == 0
    ann_file = out / 'pose' / 'coco_keypoints.json'
    labels = json.loads(ann_file.read_text())
    assert len(labels['images']) == IMAGES
    # the person finder's people (the scenes hold 1-3 each): most images have some, some have several
    assert len({a['image_id'] for a in labels['annotations']}) >= IMAGES - 2 and len(labels['annotations']) >= IMAGES

    work = tmp_path / 'train'
    options = label_data_options(ann_file)
    cmd = [sys.executable, 'tools/train.py', NANO, '--work-dir', str(work), '--cfg-options',
           *[f'{key}={value}' for key, value in options.items()]]
    proc = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS='2', PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    scalars = [json.loads(line) for f in work.glob('*/vis_data/scalars.json') for line in f.read_text().splitlines()]
    trained = [line for line in scalars if 'PCK' in line][-1]

    cfg = Config.fromfile(str(ROOT / NANO))
    cfg.merge_from_dict(dict(options, work_dir=str(tmp_path / 'untrained')))
    runner = Runner.from_cfg(cfg)
    runner.model.init_weights()
    untrained = runner.test()
    print(f'\nnano on pose-tiny labels: trained PCK {trained["PCK"]:.3f}, untrained {untrained["PCK"]:.3f}')
    assert trained['PCK'] >= untrained['PCK'] + 0.1
