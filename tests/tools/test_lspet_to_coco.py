"""tools/dataset_converters/lspet_to_coco.py on a constructed LSPET folder (three people, joints.mat written by
scipy in both layouts): joints by name, unlabelled joints without loss, head top in the box only, the held-out split,
read back by the 308-keypoint dataset."""
import json

import numpy as np
import pytest
from PIL import Image
from scipy.io import savemat

from sapiens2.metainfo import load_metainfo
from tests.scripts import load_script

NAMES = load_metainfo('keypoints308.json')['keypoint_names']
SIZES = [(120, 160), (100, 90), (80, 200)]  # (width, height) of im00001..im00003


@pytest.fixture(scope='module')
def tool():
    return load_script('tools/dataset_converters/lspet_to_coco.py')


def people() -> np.ndarray:
    """(3, 14, 3): person 1 all labelled, person 2 without its right ankle (off-image coordinates, as LSPET stores
    them) and head top high up, person 3 labelled only at the neck."""
    rng = np.random.default_rng(0)
    joints = np.zeros((3, 14, 3))
    for i, (width, height) in enumerate(SIZES):
        joints[i, :, 0] = rng.uniform(20, width - 20, 14)
        joints[i, :, 1] = rng.uniform(30, height - 10, 14)
        joints[i, :, 2] = 1
    joints[1, 0] = (-30, 0, 0)
    joints[1, 13, 1] = 5  # head top above every other joint
    joints[2, :, 2] = 0
    joints[2, 12, 2] = 1
    return joints


def lspet_folder(root, joints: np.ndarray, layout: str = 'kxn'):
    (root / 'images').mkdir(parents=True)
    for i, size in enumerate(SIZES):
        Image.new('RGB', size).save(root / 'images' / f'im{i + 1:05d}.jpg')
    savemat(root / 'joints.mat', dict(joints=joints.transpose(1, 2, 0) if layout == 'kxn' else joints))
    return root


@pytest.mark.parametrize('layout', ['kxn', 'nxk'])
def test_joints_go_to_their_308_names_and_unlabelled_ones_carry_no_loss(tool, tmp_path, layout):
    joints = people()
    root = lspet_folder(tmp_path / 'lspet', joints, layout)
    tool.main(['--lspet', str(root), '--out', str(tmp_path / 'ann'), '--num-val', '1'])
    train = json.loads((tmp_path / 'ann' / 'lspet_keypoints308_train.json').read_text())
    val = json.loads((tmp_path / 'ann' / 'lspet_keypoints308_val.json').read_text())
    assert [image['file_name'] for image in train['images']] == ['images/im00001.jpg', 'images/im00002.jpg']
    assert [image['file_name'] for image in val['images']] == ['images/im00003.jpg']  # the last image is held out
    assert [(image['width'], image['height']) for image in train['images']] == SIZES[:2]
    first, second = (np.asarray(ann['keypoints']).reshape(308, 3) for ann in train['annotations'])
    for j, name in enumerate(['right_ankle', 'right_knee', 'right_hip', 'left_hip', 'left_knee', 'left_ankle',
                              'right_wrist', 'right_elbow', 'right_shoulder', 'left_shoulder', 'left_elbow',
                              'left_wrist', 'neck']):
        assert np.allclose(first[NAMES.index(name)], (*joints[0, j, :2], 2), atol=0.01)
    assert (first[:, 2] > 0).sum() == 13  # head top has no 308 counterpart
    assert second[NAMES.index('right_ankle')].tolist() == [0, 0, 0] and (second[:, 2] > 0).sum() == 12
    assert train['annotations'][1]['num_keypoints'] == 12
    x, y, w, h = train['annotations'][1]['bbox']
    assert y < 5 and x >= 0 and x + w <= SIZES[1][0] + 1e-6 and y + h <= SIZES[1][1] + 1e-6  # head top inside
    assert (np.asarray(val['annotations'][0]['keypoints']).reshape(308, 3)[:, 2] > 0).sum() == 1


def test_output_reads_with_the_308_dataset(tool, tmp_path):
    from sapiens2.datasets.pose.keypoints308_dataset import Keypoints308CocoDataset
    root = lspet_folder(tmp_path / 'lspet', people())
    tool.main(['--lspet', str(root), '--out', str(root / 'annotations'), '--num-val', '1'])
    dataset = Keypoints308CocoDataset(data_root=str(root), ann_file='annotations/lspet_keypoints308_train.json',
                                      data_prefix=dict(img=''), pipeline=[])
    visible = [info['keypoints_visible'].reshape(-1) for info in (dataset.get_data_info(i) for i in range(2))]
    assert len(dataset) == 2 and [int(v.sum()) for v in visible] == [13, 12]


def test_existing_output_and_a_wrong_matrix_are_refused(tool, tmp_path, capsys):
    root = lspet_folder(tmp_path / 'lspet', people())
    out = tmp_path / 'ann'
    out.mkdir()
    (out / 'lspet_keypoints308_val.json').write_text('mine')
    assert tool.run_cli(tool.main, ['--lspet', str(root), '--out', str(out), '--num-val', '1']) == 1
    assert (out / 'lspet_keypoints308_val.json').read_text() == 'mine'
    assert not (out / 'lspet_keypoints308_train.json').exists()
    savemat(root / 'joints.mat', dict(joints=np.zeros((13, 3, 3))))
    assert tool.run_cli(tool.main, ['--lspet', str(root), '--out', str(tmp_path / 'other')]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and 'exists' in lines[0] and '14 x 3 x N' in lines[1]
