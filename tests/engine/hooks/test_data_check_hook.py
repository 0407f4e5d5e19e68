"""DataCheckHook checks the dataset of every loop the run built, at before_run, and logs what it checked."""
from types import SimpleNamespace

import numpy as np
import pytest
from mmengine.runner import BaseLoop
from torch.utils.data import DataLoader

from sapiens2.datasets.data_check import DataCheckError
from sapiens2.engine.hooks import DataCheckHook
from tests.datasets.own_layout_data import coco_pose_dataset, seg_dataset


class _Loop(BaseLoop):
    def run(self) -> None:
        pass


def _runner(**loops) -> SimpleNamespace:
    logged = []
    runner = SimpleNamespace(logger=SimpleNamespace(info=logged.append), logged=logged)
    for name, dataset in loops.items():
        setattr(runner, f'_{name}_loop', _Loop(runner, DataLoader(dataset, collate_fn=list)))
    return runner


def test_every_built_loop_is_checked_and_logged(tmp_path):
    (tmp_path / 'pose').mkdir()
    (tmp_path / 'seg').mkdir()
    runner = _runner(train=coco_pose_dataset(tmp_path / 'pose'),
                     val=seg_dataset(tmp_path / 'seg', [np.zeros((32, 24), np.uint8)]))
    runner._test_loop = dict(type='TestLoop')  # a loop MMEngine has not built (a config dict) is left alone
    DataCheckHook().before_run(runner)
    assert [line.split(':')[0] for line in runner.logged] == ['data check (train)', 'data check (val)']
    assert '10-keypoint layout' in runner.logged[0] and 'every label map read' in runner.logged[1]


def test_a_mismatch_in_the_val_data_stops_the_run(tmp_path):
    (tmp_path / 'pose').mkdir()
    runner = _runner(val=coco_pose_dataset(tmp_path / 'pose', num_keypoints=11))
    with pytest.raises(DataCheckError, match='has 11 keypoints'):
        DataCheckHook().before_run(runner)


def test_max_masks_is_passed_on(tmp_path):
    runner = _runner(train=seg_dataset(tmp_path, [np.zeros((32, 24), np.uint8)] * 4))
    DataCheckHook(max_masks=2).before_run(runner)
    assert '4 image/label-map pairs, 2 of 4 label maps read' in runner.logged[0]
