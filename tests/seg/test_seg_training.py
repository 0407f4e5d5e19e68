"""The tiny seg config trains on SynthHumans with tools/train.py and beats untrained and constant predictors."""
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.evaluator import Evaluator
from mmengine.registry import init_default_scope
from mmseg.registry import DATASETS, MODELS

import sapiens2  # noqa: F401  (registers everything)

REPO = Path(__file__).resolve().parents[2]
CONFIG = 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py'
TIME_LIMIT_S = 540  # wall clock on 2 shared cores; the run needs about 2 CPU minutes
MARGIN = 6.0  # mIoU points (measured: trained 13.9, untrained 0.4, all-background 3.2)


def data_options(root: str) -> list:
    loaders = ('train_dataloader', 'val_dataloader', 'test_dataloader')
    return [f'{loader}.dataset.data_root={root}' for loader in loaders]


def val_miou(cfg: Config, predict) -> float:
    """mIoU of ``predict(batch) -> list of SegDataSample`` over the validation set of ``cfg``."""
    dataset = DATASETS.build(cfg.val_dataloader.dataset)
    evaluator = Evaluator(cfg.val_evaluator)
    evaluator.dataset_meta = dataset.metainfo
    for start in range(0, len(dataset), 16):
        batch = pseudo_collate([dataset[i] for i in range(start, min(start + 16, len(dataset)))])
        evaluator.process(predict(batch), batch)
    return evaluator.evaluate(len(dataset))['mIoU']


def constant_background(batch):
    samples = batch['data_samples']
    for sample in samples:
        sample.set_field(sample.gt_sem_seg.clone(), 'pred_sem_seg')
        sample.pred_sem_seg.data = torch.zeros_like(sample.gt_sem_seg.data)
    return samples


@pytest.mark.slow
@pytest.mark.timeout(TIME_LIMIT_S + 60)
def test_tiny_seg_trains_on_synthhumans(synthhumans_root, tmp_path):
    cmd = [sys.executable, 'tools/train.py', CONFIG, '--work-dir', str(tmp_path), '--cfg-options',
           *data_options(synthhumans_root)]
    env = dict(os.environ, OMP_NUM_THREADS='1')  # more threads only oversubscribe the shared cores
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=TIME_LIMIT_S)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    scalars = glob.glob(str(tmp_path / '*' / 'vis_data' / 'scalars.json'))
    assert scalars, f'no scalars.json under {tmp_path}'
    records = [json.loads(line) for line in Path(scalars[0]).read_text().splitlines()]
    trained = [r['mIoU'] for r in records if 'mIoU' in r][-1]

    cfg = Config.fromfile(REPO / CONFIG)
    cfg.merge_from_dict({opt.split('=')[0]: opt.split('=')[1] for opt in data_options(synthhumans_root)})
    init_default_scope(cfg.default_scope)
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    model.eval()
    with torch.no_grad():
        untrained = val_miou(cfg, model.test_step)
    constant = val_miou(cfg, constant_background)
    print(f'seg mIoU: trained {trained:.2f}, untrained {untrained:.2f}, all-background {constant:.2f}')
    assert trained > untrained + MARGIN
    assert trained > constant + MARGIN
