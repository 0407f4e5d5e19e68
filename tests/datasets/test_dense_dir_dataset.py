import cv2
import numpy as np
import pytest

from sapiens2.datasets.dense_dir_dataset import DenseDirDataset


class _Dataset(DenseDirDataset):
    COMPANIONS = dict(mask_path=('mask', ('.png', )), normal_path=('normal', ('.npy', '.npz')))


def _write(root, names, skip_normal=()):
    for sub in ('rgb', 'mask', 'normal'):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for name in names:
        cv2.imwrite(str(root / 'rgb' / f'{name}.png'), np.zeros((4, 4, 3), np.uint8))
        cv2.imwrite(str(root / 'mask' / f'{name}.png'), np.zeros((4, 4), np.uint8))
        if name not in skip_normal:
            np.save(root / 'normal' / f'{name}.npy', np.zeros((4, 4, 3), np.float32))


def test_matches_companions_by_name(tmp_path):
    _write(tmp_path, ['b', 'a'])
    dataset = _Dataset(data_root=str(tmp_path))
    assert [d['sample_name'] for d in dataset] == ['a', 'b']
    assert dataset[0]['normal_path'].endswith('normal/a.npy')


def test_missing_companion_is_reported_with_names(tmp_path):
    _write(tmp_path, ['a', 'b'], skip_normal=('b', ))
    with pytest.raises(FileNotFoundError, match=r"1 of 2 images .*\['b'\]"):
        _Dataset(data_root=str(tmp_path))


def test_missing_folder_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match='rgb'):
        _Dataset(data_root=str(tmp_path))
