"""BodyPart29Dataset and the seg29 metadata: classes, palette, source remaps, SynthHumans files."""
from pathlib import Path

import cv2
import numpy as np
import pytest
from mmcv.transforms import Compose
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmseg.registry import DATASETS

from sapiens2.datasets.seg import BodyPart29Dataset, load_seg29, seg29_class_weight, seg29_flip_pairs, source_label_map

REPO = Path(__file__).resolve().parents[2]
SEG_CONFIG = str(REPO / 'configs/seg/sapiens2_0.4b_seg_bodypart29-1024x768.py')
LOAD = [dict(type='LoadImageFromFile'), dict(type='LoadAnnotations')]


@pytest.fixture(autouse=True)
def mmseg_scope():
    init_default_scope('mmseg')


def write_pair(root, name, label):
    (root / 'img').mkdir(exist_ok=True)
    (root / 'ann').mkdir(exist_ok=True)
    cv2.imwrite(str(root / 'img' / f'{name}.png'), np.zeros((*label.shape, 3), np.uint8))
    cv2.imwrite(str(root / 'ann' / f'{name}.png'), label.astype(np.uint8))


def test_metainfo_from_package_json():
    meta = BodyPart29Dataset.METAINFO
    assert len(meta['classes']) == 29 and meta['classes'][0] == 'Background' and meta['classes'][6] == 'Left_Hand'
    assert meta['palette'][0] == [50, 50, 50] and len(meta['palette']) == 29
    assert len(seg29_class_weight()) == 29 and seg29_class_weight()[0] == 0.1
    assert seg29_flip_pairs()[0] == (5, 14) and len(seg29_flip_pairs()) == 8


def test_config_constants_match_json():
    cfg = Config.fromfile(SEG_CONFIG)
    assert cfg.swap_seg_labels == [list(p) for p in seg29_flip_pairs()]
    assert cfg.model.decode_head.loss_decode[0].class_weight == seg29_class_weight()


def test_source_label_map_dome34():
    rows = load_seg29()['source_to_29_mappings']['DOME_MAPPING_34_to_29']
    table = {row['source_id']: row['target_id'] for row in rows}
    label_map = source_label_map('DOME_MAPPING_34_to_29')
    assert label_map[2] == 0  # Chair -> Background
    for source in range(256):
        expected = table.get(source, 255)
        expected = 255 if expected is None else expected
        assert label_map.get(source, source) == expected
    assert label_map[200] == 255
    with pytest.raises(KeyError, match='DOME_MAPPING_34_to_29'):
        source_label_map('nope')


def test_dataset_reads_folders_and_remaps(tmp_path):
    write_pair(tmp_path, 'a', np.array([[0, 1, 2, 33], [40, 255, 3, 1]]))
    kwargs = dict(data_root=str(tmp_path), data_prefix=dict(img_path='img', seg_map_path='ann'), pipeline=LOAD)
    with pytest.raises(ValueError, match=r'ann/a.png: label ids \[33, 40\]'):  # not 29-class ids: checked
        DATASETS.build(dict(type='BodyPart29Dataset', **kwargs))[0]
    plain = DATASETS.build(dict(type='BodyPart29Dataset', check_labels=False, **kwargs))
    assert len(plain) == 1
    assert plain[0]['gt_seg_map'].tolist() == [[0, 1, 2, 33], [40, 255, 3, 1]]
    remapped = DATASETS.build(dict(type='BodyPart29Dataset', source_mapping='DOME_MAPPING_34_to_29', **kwargs))
    table = source_label_map('DOME_MAPPING_34_to_29')
    expected = [[table.get(v, v) for v in row] for row in [[0, 1, 2, 33], [40, 255, 3, 1]]]
    assert remapped[0]['gt_seg_map'].tolist() == expected
    assert expected[0][2] == 0 and expected[1][0] == 255


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match='data_prefix.img_path'):
        BodyPart29Dataset(data_root=str(tmp_path), data_prefix=dict(img_path='nope', seg_map_path='ann'))
    (tmp_path / 'empty').mkdir()
    with pytest.raises(FileNotFoundError, match='no \\*.png images'):
        BodyPart29Dataset(data_root=str(tmp_path), data_prefix=dict(img_path='empty', seg_map_path='ann'))


def test_synthhumans_seg_files_load(synthhumans_root):
    dataset = BodyPart29Dataset(
        data_root=synthhumans_root, data_prefix=dict(img_path='val/rgb', seg_map_path='val/seg'), pipeline=LOAD)
    assert len(dataset) > 0
    sample = dataset[0]
    labels = sample['gt_seg_map']
    assert labels.shape == sample['img'].shape[:2]
    assert set(np.unique(labels).tolist()) <= set(range(29)) | {255}
    assert (labels > 0).any() and (labels == 0).any()
    pipeline = Compose([dict(type='PackSegInputs')])
    packed = pipeline(sample)
    assert packed['data_samples'].gt_sem_seg.data.shape[1:] == labels.shape


def test_label_check_follows_load_annotations_once(tmp_path):
    write_pair(tmp_path, 'a', np.array([[0, 28], [255, 1]]))
    kwargs = dict(data_root=str(tmp_path), data_prefix=dict(img_path='img', seg_map_path='ann'))
    dataset = BodyPart29Dataset(pipeline=LOAD, **kwargs)
    names = [type(t).__name__ for t in dataset.pipeline.transforms]
    assert names == ['LoadImageFromFile', 'LoadSegAnnotations', 'CheckSegLabels']
    assert dataset[0]['gt_seg_map'].tolist() == [[0, 28], [255, 1]]
    explicit = BodyPart29Dataset(pipeline=[*LOAD, dict(type='CheckSegLabels', num_classes=29)], **kwargs)
    assert [type(t).__name__ for t in explicit.pipeline.transforms] == names
    unchecked = BodyPart29Dataset(pipeline=LOAD, check_labels=False, **kwargs)
    assert [type(t).__name__ for t in unchecked.pipeline.transforms] == ['LoadImageFromFile', 'LoadAnnotations']


def test_label_check_sees_ids_after_the_source_remap(tmp_path):
    table = source_label_map('DOME_MAPPING_34_to_29')
    write_pair(tmp_path, 'a', np.array([[0, 33], [40, 200]]))  # source ids: all map to a class or 255
    dataset = BodyPart29Dataset(data_root=str(tmp_path), data_prefix=dict(img_path='img', seg_map_path='ann'),
                                pipeline=LOAD, source_mapping='DOME_MAPPING_34_to_29')
    assert dataset[0]['gt_seg_map'].tolist() == [[table.get(v, v) for v in row] for row in [[0, 33], [40, 200]]]
