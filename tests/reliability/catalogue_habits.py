"""Bad-input cases of the mmpose/mmseg habits (issue 37): data made for another layout, stopped before the first
iteration by ``DataCheckHook``, and a checkpoint given where a config goes.
The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its end)."""
import json
from pathlib import Path

import cv2
import numpy as np

from tests.reliability.catalogue import POSE_NANO, REPO, CommandError, _command, case

UPPER_BODY10 = REPO / 'configs/_base_/datasets/layouts/upper_body10.py'
CLASSES5 = ('background', 'head', 'torso', 'left_arm', 'right_arm')


def _train_own_pose(tmp: Path, num_keypoints: int):
    """What tools/train.py runs, on a 10-keypoint nano config whose one COCO annotation has ``num_keypoints``
    keypoints."""
    from sapiens2.engine.launch import build_runner, load_config, prepare_train_config
    cv2.imwrite(str(tmp / 'a.jpg'), np.zeros((64, 48, 3), np.uint8))
    ann = dict(images=[dict(id=1, file_name='a.jpg', width=48, height=64)],
               annotations=[dict(id=3, image_id=1, category_id=1, bbox=[4, 4, 40, 56], area=2240, iscrowd=0,
                                 num_keypoints=num_keypoints,
                                 keypoints=[v for i in range(num_keypoints) for v in (10 + i, 12 + i, 2)])],
               categories=[dict(id=1, name='person')])
    (tmp / 'ann.json').write_text(json.dumps(ann))
    config = tmp / 'pose10.py'
    config.write_text(
        f"_base_ = ['{POSE_NANO}']\nmodel = dict(head=dict(out_channels=None))\n"
        f"custom_metainfo = '{UPPER_BODY10}'\ncustom_data_root = '{tmp}'\n"
        f"train_dataloader = dict(batch_size=1, num_workers=0, persistent_workers=False, dataset=dict("
        f"type='CocoDataset', data_mode='topdown', ann_file='ann.json', data_prefix=dict(img='')))\n"
        "train_cfg = dict(max_iters=1, val_interval=1000)\nval_dataloader = None\nval_cfg = None\n"
        "val_evaluator = None\ntest_dataloader = None\ntest_cfg = None\ntest_evaluator = None\n")
    cfg = load_config(str(config))
    return lambda: build_runner(prepare_train_config(cfg, str(config), str(tmp / 'work'))).train()


@case('train-data-keypoint-count', 'training data', 'tools/train.py on a 10-keypoint layout (mmpose CocoDataset) whose '
      'annotation has 11 keypoints', 'one line before the first iteration naming the file, the annotation, the '
      'counts and the fix (was `RuntimeError: stack expects each tensor to be equal size` at the first iteration)',
      error=ValueError, kind='DataCheckError', match=r'^{tmp}/ann\.json: annotation 3 \(image {tmp}/a\.jpg\) has '
      r'11 keypoints, but the dataset.s layout \(upper_body10\) has 10; give every annotation')
def _(tmp):
    return _train_own_pose(tmp, 11)


@case('seg-data-label-beyond-classes', 'training data', "a label id 7 in the masks of mmseg's BaseSegDataset with 5 "
      'classes', 'one line naming the mask, the id and the class count (was `IndexError: Target 7 is out of bounds` '
      'in the loss)', error=ValueError, kind='DataCheckError',
      match=r'{tmp}/ann/0\.png: label ids \[7\] are neither classes 0\.\.4 nor 255 \(ignore\)')
def _(tmp):
    from mmseg.datasets import BaseSegDataset

    from sapiens2.datasets.data_check import check_dataset
    for sub in ('img', 'ann'):
        (tmp / sub).mkdir()
    cv2.imwrite(str(tmp / 'img' / '0.jpg'), np.zeros((16, 12, 3), np.uint8))
    cv2.imwrite(str(tmp / 'ann' / '0.png'), np.full((16, 12), 7, np.uint8))
    dataset = BaseSegDataset(data_root=str(tmp), data_prefix=dict(img_path='img', seg_map_path='ann'),
                             metainfo=dict(classes=CLASSES5), pipeline=[])
    return lambda: check_dataset(dataset)


@case('infer-model-is-a-checkpoint', 'inference', 'sapiens2-infer --model work_dirs/x/iter_20.pth (the checkpoint '
      'where the config goes)', "one line naming the config training wrote next to it and the command (was MMEngine's "
      '`Only py/yml/yaml/json type are supported now!`)', error=CommandError,
      match=r'^exit 1: sapiens2-infer: error: {tmp}/work/iter_20\.pth is a checkpoint, not a config: give the '
      r"model's config \({tmp}/work/pose10\.py, the one training wrote next to it\) .* --model {tmp}/work/pose10\.py "
      r'--weights {tmp}/work/iter_20\.pth')
def _(tmp):
    from sapiens2.apis.cli import main
    (tmp / 'work').mkdir()
    (tmp / 'work' / 'pose10.py').write_text(f"_base_ = ['{POSE_NANO}']\n")
    (tmp / 'work' / 'iter_20.pth').write_bytes(b'not read')
    cv2.imwrite(str(tmp / 'a.png'), np.zeros((32, 24, 3), np.uint8))
    return _command(main, [str(tmp / 'a.png'), '--model', str(tmp / 'work' / 'iter_20.pth'), '--out',
                           str(tmp / 'out'), '--quiet'])

