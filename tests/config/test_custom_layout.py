"""A config's custom_metainfo / custom_data_root reach the datasets, the head, the flips and the loss; bad metainfo
files fail in one line naming the file."""
import os.path as osp
import textwrap
from pathlib import Path

import pytest
from mmengine.config import Config

from sapiens2.config.layout_file import LayoutFileError, read_parts_metainfo
from sapiens2.engine.launch import load_config

REPO = Path(__file__).resolve().parents[2]
LAYOUTS = REPO / 'configs' / '_base_' / 'datasets' / 'layouts'
LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')


def user_config(tmp_path: Path, base: str, **settings) -> str:
    lines = [f"_base_ = ['sapiens2::{base}']"] + [f'{k} = {v!r}' for k, v in settings.items()]
    path = tmp_path / 'my_config.py'
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def flips(cfg: Config) -> list:
    return [t for t in cfg.train_dataloader.dataset.pipeline if t.type == 'RandomFlip']


def test_keypoints_layout_reaches_datasets_and_head(tmp_path):
    cfg = load_config(user_config(tmp_path, 'pose/sapiens2_0.4b_pose_custom-1024x768.py',
                                  custom_metainfo='sapiens2::_base_/datasets/layouts/upper_body10.py',
                                  custom_data_root='data/mine/'))
    assert cfg.model.head.out_channels == 10
    for loader in LOADERS:
        dataset = cfg[loader].dataset
        assert dataset.data_root == 'data/mine/' and dataset.type == 'CocoDataset'
        assert osp.samefile(dataset.metainfo.from_file, LAYOUTS / 'upper_body10.py')
    assert cfg.val_evaluator.type == 'CocoMetric' and 'ann_file' not in cfg.val_evaluator


def test_default_keypoint_layout_is_mmpose_coco():
    cfg = load_config('sapiens2::pose/sapiens2_tiny_pose_custom-256x192.py')
    assert cfg.model.head.out_channels == 17
    assert cfg.train_dataloader.dataset.metainfo.from_file.endswith(osp.join('.mim', 'configs', '_base_', 'datasets',
                                                                              'coco.py'))


def test_parts_layout_with_pairs_reaches_flips_tta_and_loss(tmp_path):
    cfg = load_config(user_config(tmp_path, 'seg/sapiens2_0.4b_seg_custom-1024x768.py',
                                  custom_metainfo='sapiens2::_base_/datasets/layouts/body7.py',
                                  custom_data_root='data/parts'))
    head = cfg.model.decode_head
    assert head.num_classes == 7
    assert head.loss_decode[0].class_weight == [0.2, 1.0, 1.0, 2.0, 2.0, 1.5, 1.5]
    assert [f.swap_seg_labels for f in flips(cfg)] == [[[3, 4], [5, 6]]]
    assert cfg.tta_model.swap_seg_labels == [[3, 4], [5, 6]]
    meta = cfg.val_dataloader.dataset.metainfo
    assert meta.classes[3] == 'left_arm' and len(meta.palette) == 7 and meta.flip_pairs == [[3, 4], [5, 6]]
    assert {cfg[loader].dataset.data_root for loader in LOADERS} == {'data/parts'}


def test_parts_layout_without_pairs_swaps_nothing(tmp_path):
    cfg = load_config(user_config(tmp_path, 'seg/sapiens2_tiny_seg_custom-256x192.py',
                                  custom_metainfo='sapiens2::_base_/datasets/layouts/person_hair.py'))
    assert cfg.model.decode_head.num_classes == 3 and cfg.model.decode_head.loss_decode[0].class_weight is None
    assert [f.swap_seg_labels for f in flips(cfg)] == [None] and cfg.tta_model.swap_seg_labels == []


def test_metainfo_next_to_the_config(tmp_path):
    (tmp_path / 'mine.py').write_text("dataset_info = dict(classes=('bg', 'shirt'), flip_pairs=[])\n")
    cfg = load_config(user_config(tmp_path, 'seg/sapiens2_tiny_seg_custom-256x192.py', custom_metainfo='mine.py'))
    assert cfg.model.decode_head.num_classes == 2
    assert cfg.train_dataloader.dataset.metainfo.classes == ('bg', 'shirt')


def test_configs_without_custom_metainfo_are_untouched():
    cfg = load_config('sapiens2::seg/sapiens2_tiny_seg_synthhumans-256x192.py')
    assert cfg.model.decode_head.num_classes == 29 and 'metainfo' not in cfg.train_dataloader.dataset
    assert len(flips(cfg)[0].swap_seg_labels) == 8


@pytest.mark.parametrize('content, message', [
    ("dataset_info = dict(classes=('a', 'b'), flip_pairs=[('a', 'c')])", "'c', which is not one of the 2 classes"),
    ("dataset_info = dict(classes=('a', 'b'), palette=[[0, 0, 0]])", '1 entries in palette for 2 classes'),
    ("dataset_info = dict(classes=('a', 'b'), flip_pairs=[(0, 1, 2)])", 'is not a pair'),
    ('classes = 3', 'a metainfo file defines `dataset_info'),
])
def test_bad_parts_metainfo_is_one_line(tmp_path, content, message):
    path = tmp_path / 'bad.py'
    path.write_text(textwrap.dedent(content) + '\n')
    with pytest.raises(LayoutFileError, match=message) as err:
        read_parts_metainfo(str(path))
    assert str(path) in str(err.value) and '\n' not in str(err.value)


def test_missing_metainfo_file_names_where_it_looked(tmp_path):
    with pytest.raises(LayoutFileError, match="custom_metainfo 'nope.py': no such file") as err:
        load_config(user_config(tmp_path, 'pose/sapiens2_tiny_pose_custom-256x192.py', custom_metainfo='nope.py'))
    assert str(tmp_path) in str(err.value)


def test_keypoint_metainfo_without_keypoints_is_refused(tmp_path):
    (tmp_path / 'parts.py').write_text("dataset_info = dict(classes=('a', 'b'))\n")
    with pytest.raises(LayoutFileError, match='no keypoint_info'):
        load_config(user_config(tmp_path, 'pose/sapiens2_tiny_pose_custom-256x192.py', custom_metainfo='parts.py'))


@pytest.mark.parametrize('base, setting, size', [
    ('pose/sapiens2_tiny_pose_custom-256x192.py', 'model = dict(head=dict(out_channels=10))', 10),
    ('seg/sapiens2_tiny_seg_custom-256x192.py', 'model = dict(decode_head=dict(num_classes=7, out_channels=7))', 7),
])
def test_explicit_head_sizes_that_agree_are_kept(tmp_path, base, setting, size):
    layout = 'upper_body10.py' if 'pose' in base else 'body7.py'
    path = user_config(tmp_path, base, custom_metainfo=f'sapiens2::_base_/datasets/layouts/{layout}')
    Path(path).write_text(Path(path).read_text() + setting + '\n')
    cfg = load_config(path)
    head = cfg.model.get('head') or cfg.model.decode_head
    assert size in (head.get('out_channels'), head.get('num_classes'))


def test_explicit_head_size_that_disagrees_is_one_line(tmp_path):
    from sapiens2.config.layout_checks import LayoutMismatchError
    path = user_config(tmp_path, 'pose/sapiens2_tiny_pose_custom-256x192.py',
                       custom_metainfo='sapiens2::_base_/datasets/layouts/upper_body10.py')
    Path(path).write_text(Path(path).read_text() + 'model = dict(head=dict(out_channels=12))\n')
    with pytest.raises(LayoutMismatchError, match=r'model\.head\.out_channels = 12 but custom_metainfo .*upper_body10'
                                                  r'\.py has 10 keypoints; set model\.head\.out_channels = 10') as err:
        load_config(path)
    assert str(err.value).startswith(path) and '\n' not in str(err.value)


def test_relative_metainfo_is_saved_absolute(tmp_path):
    (tmp_path / 'mine.py').write_text("dataset_info = dict(classes=('bg', 'shirt'))\n")
    cfg = load_config(user_config(tmp_path, 'seg/sapiens2_tiny_seg_custom-256x192.py', custom_metainfo='mine.py'))
    assert cfg.custom_metainfo == str(tmp_path / 'mine.py')
    packaged = load_config(user_config(tmp_path, 'seg/sapiens2_tiny_seg_custom-256x192.py',
                                       custom_metainfo='sapiens2::_base_/datasets/layouts/body7.py'))
    assert packaged.custom_metainfo == 'sapiens2::_base_/datasets/layouts/body7.py'  # found from anywhere as it is


def test_layout_keys_are_checked_without_custom_metainfo(tmp_path):
    """A misspelt key on a config with no custom_metainfo at all (it would run on the base's 29 classes)."""
    from sapiens2.config.custom_layout import LayoutKeyError
    with pytest.raises(LayoutKeyError, match=r"'custom_metainf' is not read; did you mean 'custom_metainfo'\?"):
        load_config(user_config(tmp_path, 'seg/sapiens2_tiny_seg_synthhumans-256x192.py', custom_metainf='x.py'))


def test_data_root_equal_to_the_dataloaders_is_fine(tmp_path):
    cfg = load_config(user_config(tmp_path, 'seg/sapiens2_tiny_seg_custom-256x192.py', data_root='data/mine',
                                  custom_data_root='data/mine'))
    assert cfg.train_dataloader.dataset.data_root == 'data/mine'
