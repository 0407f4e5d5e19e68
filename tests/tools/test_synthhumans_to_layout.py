"""tools/dataset_converters/synthhumans_to_layout.py: SynthHumans in COCO-17, COCO-WholeBody, an own keypoint file
and own classes, read back by mmpose's and mmseg's datasets."""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from sapiens2.metainfo import load_metainfo
from tests.scripts import load_script

LAYOUTS = 'sapiens2::_base_/datasets/layouts/'
SUBSET = ['--num-train', '2', '--num-val', '1']


@pytest.fixture(scope='module')
def tool():
    return load_script('tools/dataset_converters/synthhumans_to_layout.py')


def convert(tool, src, out, *args) -> Path:
    tool.main(['--src', src, '--out', str(out), *args, *SUBSET])
    return Path(out)


def source_annotations(src: str) -> dict:
    data = json.loads((Path(src) / 'annotations' / 'keypoints308_train.json').read_text())
    return {ann['id']: np.asarray(ann['keypoints']).reshape(-1, 3) for ann in data['annotations']}


def test_coco17_points_are_the_308_points_of_the_same_name(tool, synthhumans_root, tmp_path):
    out = convert(tool, synthhumans_root, tmp_path / 'coco17', '--keypoints', 'coco17')
    data = json.loads((out / 'annotations' / 'train.json').read_text())
    assert [image['file_name'] for image in data['images']] == ['train/000000.jpg', 'train/000001.jpg']
    assert cv2.imread(str(out / 'images' / 'train' / '000001.jpg')).shape == (256, 192, 3)
    names308 = load_metainfo('keypoints308.json')['keypoint_names']
    source = source_annotations(synthhumans_root)
    category = data['categories'][0]
    assert len(category['keypoints']) == 17 and ['left_ankle', 'left_knee'] in category['skeleton']
    for ann in data['annotations']:
        points = np.asarray(ann['keypoints']).reshape(17, 3)
        for k, name in enumerate(category['keypoints']):
            expected = source[ann['id']][names308.index(name)]
            assert points[k, 2] == expected[2]
            assert np.allclose(points[k, :2], expected[:2] if expected[2] > 0 else 0, atol=1e-3)
        assert ann['num_keypoints'] == int((points[:, 2] > 0).sum()) and ann['bbox'] and ann['area'] > 0


def test_coco_wholebody_reads_with_mmpose(tool, synthhumans_root, tmp_path):
    from mmpose.datasets import CocoWholeBodyDataset
    out = convert(tool, synthhumans_root, tmp_path / 'wholebody', '--keypoints', 'coco_wholebody')
    ann = json.loads((out / 'annotations' / 'val.json').read_text())['annotations'][0]
    sizes = {field: len(ann[field]) // 3 for field in ('keypoints', 'foot_kpts', 'face_kpts', 'lefthand_kpts',
                                                       'righthand_kpts')}
    assert sizes == dict(keypoints=17, foot_kpts=6, face_kpts=68, lefthand_kpts=21, righthand_kpts=21)
    face = np.asarray(ann['face_kpts']).reshape(68, 3)
    assert ann['face_valid'] == bool((face[:, 2] > 0).any()) and face[:8, 2].max() == 0  # no jaw-contour source
    dataset = CocoWholeBodyDataset(data_root=str(out), ann_file='annotations/val.json', data_prefix=dict(img='images/'),
                                   test_mode=True)
    assert dataset[0]['keypoints'].shape == (1, 133, 2) and dataset.metainfo['num_keypoints'] == 133


def test_own_keypoint_file_by_name(tool, synthhumans_root, tmp_path):
    out = convert(tool, synthhumans_root, tmp_path / 'upper', '--keypoints', LAYOUTS + 'upper_body10.py')
    data = json.loads((out / 'annotations' / 'train.json').read_text())
    neck = load_metainfo('keypoints308.json')['keypoint_names'].index('neck')
    source = source_annotations(synthhumans_root)
    ann = data['annotations'][0]
    assert np.allclose(np.asarray(ann['keypoints']).reshape(10, 3)[1], source[ann['id']][neck], atol=1e-3)


def test_own_classes_from_the_29_labels(tool, synthhumans_root, tmp_path):
    hair = convert(tool, synthhumans_root, tmp_path / 'hair', '--parts', LAYOUTS + 'person_hair.py',
                   '--class-map', 'person=*')
    body7 = convert(tool, synthhumans_root, tmp_path / 'body7', '--parts', LAYOUTS + 'body7.py', '--class-map',
                    'left_arm=Left_Upper_Arm,Left_Lower_Arm,Left_Hand', 'torso=Torso,Upper_Clothing')
    names = load_metainfo('seg29.json')['class_names']
    source = cv2.imread(str(Path(synthhumans_root) / 'val' / 'seg' / '000000.png'), cv2.IMREAD_UNCHANGED)
    labels = cv2.imread(str(hair / 'annotations' / 'val' / '000000.png'), cv2.IMREAD_UNCHANGED)
    assert labels.shape == source.shape and (hair / 'images' / 'val' / '000000.jpg').is_file()
    assert (labels[source == 0] == 0).all() and (labels[source == names.index('Hair')] == 2).all()
    assert (labels[(source != 0) & (source != names.index('Hair'))] == 1).all()
    labels = cv2.imread(str(body7 / 'annotations' / 'val' / '000000.png'), cv2.IMREAD_UNCHANGED)
    assert (labels[source == names.index('Left_Hand')] == 3).all() and (labels[source == 0] == 0).all()
    assert (labels[source == names.index('Upper_Clothing')] == 2).all()
    assert (labels[source == names.index('Right_Hand')] == 255).all()  # no class takes it


def test_refusals_are_one_line(tool, synthhumans_root, tmp_path, capsys):
    out = convert(tool, synthhumans_root, tmp_path / 'once', '--keypoints', 'coco17')
    with pytest.raises(FileExistsError, match='exists; choose another --out'):
        tool.main(['--src', synthhumans_root, '--out', str(out), '--keypoints', 'coco17', *SUBSET])
    own = tmp_path / 'own.py'
    own.write_text("dataset_info = dict(keypoint_info={0: dict(name='tail_tip', id=0)}, sigmas=[0.1])\n")
    with pytest.raises(ValueError, match=r"keypoints \['tail_tip'\] are neither 308-keypoint nor COCO-WholeBody"):
        tool.keypoint_layout(str(own))
    with pytest.raises(ValueError, match="'Tail' is not a 29-class label"):
        tool.class_lookup(('background', 'tail'), ['tail=Tail'])
    assert tool.run_cli(tool.main, ['--src', str(tmp_path), '--out', str(tmp_path / 'x'), '--keypoints', 'coco17']) == 1
    assert 'no SynthHumans folder there' in capsys.readouterr().err
