"""Helpers of the dense project training tests (normal, pointmap, albedo): train a tiny config with
``tools/train.py``, evaluate the same config untrained, and iterate over its validation set."""
import glob
import json
import os.path as osp
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest


def _data_options(root: str) -> Dict[str, str]:
    return {
        'train_dataloader.dataset.data_root': osp.join(root, 'train'),
        'val_dataloader.dataset.data_root': osp.join(root, 'val'),
        'test_dataloader.dataset.data_root': osp.join(root, 'val'),
    }


def train_tiny(config: str, root: str, work_dir: str, metric_key: str, timeout: int = 800) -> Dict[str, float]:
    """Run ``tools/train.py`` on SynthHumans and return the final validation metrics (those with ``metric_key``)."""
    options = [f'{k}={v}' for k, v in _data_options(root).items()]
    proc = subprocess.run([sys.executable, 'tools/train.py', config, '--work-dir', work_dir, '--cfg-options', *options],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    scalars = glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json'))
    assert scalars, f'no scalars.json under {work_dir}'
    with open(scalars[0]) as f:
        validations = [json.loads(line) for line in f if metric_key in line]
    assert validations, f'no {metric_key} in {scalars[0]}'
    return validations[-1]


def evaluate_untrained(config: str, root: str, work_dir: str) -> Dict[str, float]:
    """Validation metrics of the config's model straight after weight init (the default scope the runner sets is
    restored afterwards, so later tests in the process are unaffected)."""
    from mmengine.registry import DefaultScope

    from sapiens2.engine.launch import build_runner, load_config
    cfg = load_config(config, _data_options(root))
    cfg.work_dir = work_dir
    cfg.visualizer.name = f'untrained_{osp.basename(config)}'
    cfg.default_hooks.pop('checkpoint')  # its save_best needs a training run; MMEngine's plain default is used
    cfg.default_hooks.pop('visualization')
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        runner = build_runner(cfg)
        runner.model.init_weights()
        return runner.val()


def val_samples(config: str, root: str) -> List:
    """Packed data samples of the config's validation set (ground truth at the original size)."""
    from mmengine.registry import DefaultScope

    from sapiens2.engine.launch import load_config
    from sapiens2.registry import DATASETS
    cfg = load_config(config, _data_options(root))
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        dataset = DATASETS.build(cfg.val_dataloader.dataset)
        return [dataset[index]['data_samples'] for index in range(len(dataset))]


def evaluate_predictions(metric_cfg: dict, samples: List, predict: Callable) -> Dict[str, float]:
    """Run a metric over ``samples`` with ``pred_dense`` = ``predict(sample)``."""
    from mmengine.structures import PixelData

    from sapiens2.registry import METRICS
    metric = METRICS.build(metric_cfg)
    for sample in samples:
        sample.pred_dense = PixelData(data=predict(sample))
        metric.process({}, [sample.to_dict()])
    return metric.compute_metrics(metric.results)


def train_and_untrained(config: str, root: str, work_dir: Path, metric_key: str,
                        timeout: int = 800) -> Tuple[Dict[str, float], Dict[str, float], List]:
    """The trained and the untrained config's validation metrics (work dirs ``train`` and ``untrained`` under
    ``work_dir``), and its validation samples: what each project's training test compares."""
    trained = train_tiny(config, root, str(work_dir / 'train'), metric_key, timeout=timeout)
    untrained = evaluate_untrained(config, root, str(work_dir / 'untrained'))
    return trained, untrained, val_samples(config, root)


@pytest.fixture(scope='session')
def dense_training() -> dict:
    """The helpers above, for the project training tests."""
    return dict(runs=train_and_untrained, evaluate=evaluate_predictions)


@pytest.fixture
def sapiens2_scope():
    """Build registry names from the ``sapiens2`` scope (as configs with ``default_scope='sapiens2'`` do)."""
    from mmengine.registry import DefaultScope
    with DefaultScope.overwrite_default_scope('sapiens2'):
        yield
