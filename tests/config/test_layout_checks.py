"""Layout mistakes of a pose or seg config are one line each before anything is built (sapiens2.config.layout_checks):
head channels vs the dataset's keypoints, num_classes vs its classes, class_weight length, flip pairs, and metrics
made for another layout; the 29-class flip pairs give way to the dataset's own left/right pairs with one notice."""
import warnings
from pathlib import Path

import pytest

from sapiens2.config.layout_checks import LayoutMismatchError, LayoutNotice
from sapiens2.engine.launch import load_config

REPO = Path(__file__).resolve().parents[2]
POSE = REPO / 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
SEG = REPO / 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py'
COCO17 = ("train_dataloader = dict(dataset=dict(type='CocoDataset'))\n"
          "val_dataloader = dict(dataset=dict(type='CocoDataset'))\ntest_dataloader = val_dataloader\n")
THREE = "metainfo = dict(classes=('background', 'person', 'hair'), palette=[[0, 0, 0], [0, 255, 0], [255, 0, 0]])\n"
SEVEN = ("metainfo = dict(classes=('background', 'torso', 'left_arm', 'right_arm', 'Left Leg', 'Right Leg', 'hair'), "
         "palette=[[i, i, i] for i in range(7)])\n")


def own_classes(metainfo: str, train_pipeline: str = '') -> str:
    return (metainfo + "train_dataloader = dict(dataset=dict(type='BaseSegDataset', metainfo=metainfo"
            f"{train_pipeline}))\n"
            "val_dataloader = dict(dataset=dict(type='BaseSegDataset', metainfo=metainfo))\n"
            "test_dataloader = val_dataloader\n")


def config(tmp_path: Path, base: Path, body: str) -> str:
    path = tmp_path / 'user_config.py'
    path.write_text(f"_base_ = ['{base}']\n{body}")
    return str(path)


def lines(tmp_path: Path, base: Path, body: str) -> list[str]:
    with pytest.raises(LayoutMismatchError) as err:
        load_config(config(tmp_path, base, body))
    return str(err.value).splitlines()


def test_pose_head_and_partition_metric_against_coco17(tmp_path):
    found = lines(tmp_path, POSE, COCO17)
    source = f'{tmp_path}/user_config.py: '
    assert source + ('model.head.out_channels = 308 but train_dataloader.dataset (CocoDataset) has 17 keypoints; '
                     'set model.head.out_channels = 17') in found
    assert any(line.startswith(source + 'val_evaluator[1].partitions: KeypointPartitionMetric names keypoint 307 '
                                        'but val_dataloader.dataset (CocoDataset) has 17 keypoints') for line in found)
    assert all(line.startswith(source) for line in found) and len(found) == len(set(found))


def test_pose_config_fitting_coco17_passes(tmp_path):
    body = COCO17 + ("model = dict(head=dict(out_channels=17))\n"
                     "val_evaluator = [dict(type='CocoMetric'), dict(type='PCKAccuracy', thr=0.05)]\n"
                     "test_evaluator = val_evaluator\n")
    cfg = load_config(config(tmp_path, POSE, body))
    assert cfg.model.head.out_channels == 17


def test_layout_metric_on_another_keypoint_set(tmp_path):
    body = COCO17 + ("model = dict(head=dict(out_channels=17))\n"
                     "val_evaluator = dict(_delete_=True, type='KeypointFormatCocoMetric', ann_file='a.json', "
                     "keypoint_format='coco17')\ntest_evaluator = val_evaluator\n")
    assert lines(tmp_path, POSE, body) == [
        f'{tmp_path}/user_config.py: {split}_evaluator: KeypointFormatCocoMetric scores 308-keypoint predictions but '
        f'{split}_dataloader.dataset (CocoDataset) has 17 keypoints; use CocoMetric (or remove it)'
        for split in ('val', 'test')]


def test_seg_num_classes_and_class_weight(tmp_path):
    found = lines(tmp_path, SEG, own_classes(THREE))
    source = f'{tmp_path}/user_config.py: '
    assert source + ('model.decode_head.num_classes = 29 but train_dataloader.dataset (BaseSegDataset) has 3 '
                     'classes (background, person, hair); set model.decode_head.num_classes = 3') in found
    found = lines(tmp_path, SEG, own_classes(THREE) + 'model = dict(decode_head=dict(num_classes=3))\n')
    assert found == [source + 'model.decode_head.loss_decode[0].class_weight has 29 weights but '
                     'model.decode_head.num_classes = 3; give 3 weights (one per class) or remove class_weight']


def test_seg_flip_pairs_out_of_range(tmp_path):
    flip = ", pipeline=[dict(type='RandomFlip', prob=0.5, swap_seg_labels=[[1, 3]])]"
    body = own_classes(THREE, flip) + """model = dict(decode_head=dict(num_classes=3, loss_decode=[
    dict(type='Sapiens2SegCrossEntropyLoss', class_weight=[0.1, 1, 1]), dict(type='Sapiens2DiceLoss')]))
"""
    assert lines(tmp_path, SEG, body) == [
        f'{tmp_path}/user_config.py: train_dataloader.dataset.pipeline[0].swap_seg_labels = [[1, 3]] names classes '
        'beyond the 3 of the dataset; give the left/right pairs of its classes (class ids), or []']


def fitted(tmp_path, classes: str):
    body = own_classes(classes) + "model = dict(decode_head=dict(num_classes={n}, loss_decode=[" \
        "dict(type='Sapiens2SegCrossEntropyLoss', class_weight=[1.0] * {n}), dict(type='Sapiens2DiceLoss')]))\n"
    n = 3 if classes is THREE else 7
    with pytest.warns(LayoutNotice) as caught:
        cfg = load_config(config(tmp_path, SEG, body.format(n=n)))
    assert len(caught) == 1
    return cfg, str(caught[0].message)


def test_29_class_flip_pairs_give_way_to_none_for_three_classes(tmp_path):
    cfg, notice = fitted(tmp_path, THREE)
    flip = next(t for t in cfg.train_dataloader.dataset.pipeline if t.type == 'RandomFlip')
    assert flip.swap_seg_labels == [] and cfg.tta_model.swap_seg_labels == []
    assert 'the 29-class left/right pairs of swap_seg_labels (train_dataloader.dataset.pipeline[2], tta_model) do ' \
           "not fit the dataset's classes; using its own: none" in notice


def test_29_class_flip_pairs_give_way_to_the_left_right_names(tmp_path):
    cfg, notice = fitted(tmp_path, SEVEN)
    flip = next(t for t in cfg.train_dataloader.dataset.pipeline if t.type == 'RandomFlip')
    assert flip.swap_seg_labels == [[2, 3], [4, 5]] and cfg.tta_model.swap_seg_labels == [[2, 3], [4, 5]]
    assert "using its own: [['left_arm', 'right_arm'], ['Left Leg', 'Right Leg']]" in notice


def test_packaged_layouts_pass_unchanged():
    with warnings.catch_warnings():
        warnings.simplefilter('error', LayoutNotice)
        for path in (POSE, SEG):
            load_config(str(path))
    cfg = load_config(str(SEG))
    assert cfg.tta_model.swap_seg_labels == [[5, 14], [6, 15], [7, 16], [8, 17], [9, 18], [10, 19], [11, 20],
                                             [12, 21]]


def test_seg_flip_pairs_from_names_and_metainfo():
    from sapiens2.metainfo.seg29 import seg29_flip_pairs, seg29_metainfo
    from sapiens2.metainfo.seg_flip_pairs import seg_flip_pairs
    assert seg_flip_pairs(seg29_metainfo()) == seg29_flip_pairs()
    assert seg_flip_pairs(dict(classes=('bg', 'hand_left', 'hand_right', 'LeftEye'))) == [(1, 2)]
    assert seg_flip_pairs(dict(classes=('bg', 'a', 'b'), flip_pairs=[['a', 'b']])) == [(1, 2)]
    with pytest.raises(ValueError, match=r"flip_pairs names 'c', which is not one of the 3 classes"):
        seg_flip_pairs(dict(classes=('bg', 'a', 'b'), flip_pairs=[['a', 'c']]))


def test_train_tool_prints_the_one_line_before_building_anything(tmp_path, monkeypatch, capsys):
    from sapiens2.utils.cli_errors import run_cli
    from tests.scripts import load_script
    path = config(tmp_path, POSE, COCO17 + 'val_evaluator = test_evaluator = dict(_delete_=True, type="CocoMetric")\n')
    monkeypatch.setattr('sys.argv', ['train.py', path, '--work-dir', str(tmp_path / 'work')])
    assert run_cli(load_script('tools/train.py', 'train_tool').main) == 1
    assert capsys.readouterr().err.splitlines() == [
        f'train.py: error: LayoutMismatchError: {path}: model.head.out_channels = 308 but train_dataloader.dataset '
        '(CocoDataset) has 17 keypoints; set model.head.out_channels = 17 (--debug shows the traceback)']
    assert not (tmp_path / 'work').exists()  # stopped before the runner made its work dir
