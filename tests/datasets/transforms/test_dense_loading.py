"""The array, mask and size readers shared by the dense loading transforms."""
import numpy as np
import pytest

from sapiens2.datasets.transforms.dense_loading import read_array, read_npz_array


def test_read_array_keeps_numeric_arrays_and_refuses_others(tmp_path):
    for array in (np.ones((2, 3), np.float16), np.arange(4), np.array([True, False])):
        np.save(tmp_path / 'a.npy', array)
        loaded = read_array(str(tmp_path / 'a.npy'))
        assert loaded.dtype == array.dtype and np.array_equal(loaded, array)
    np.save(tmp_path / 'a.npy', np.array(['x', 'y']))
    with pytest.raises(ValueError, match=r'depth map .*a\.npy holds <U1 values; expected numbers'):
        read_array(str(tmp_path / 'a.npy'), 'depth map')
    with pytest.raises(FileNotFoundError, match=r'^depth map .*b\.npy does not exist$'):
        read_array(str(tmp_path / 'b.npy'), 'depth map')


def test_damaged_npy_header_is_a_clear_error(tmp_path):
    np.save(tmp_path / 'a.npy', np.ones(3, np.float32))
    data = bytearray((tmp_path / 'a.npy').read_bytes())
    data[data.index(b'}')] = ord(' ')  # numpy's header parser then raises tokenize.TokenError, not a ValueError
    (tmp_path / 'a.npy').write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r'a\.npy is not a readable \.npy file of numbers'):
        read_array(str(tmp_path / 'a.npy'))


def test_read_npz_array(tmp_path):
    np.savez(tmp_path / 'n.npz', normal=np.zeros((2, 2, 3), np.float32))
    assert read_npz_array(str(tmp_path / 'n.npz'), 'normal').shape == (2, 2, 3)
    np.save(tmp_path / 'single.npy', np.zeros(3))
    with pytest.raises(ValueError, match=r'single\.npy is a single \.npy array, not a \.npz archive'):
        read_npz_array(str(tmp_path / 'single.npy'), 'normal')
    (tmp_path / 'cut.npz').write_bytes((tmp_path / 'n.npz').read_bytes()[:100])
    with pytest.raises(ValueError, match=r'cut\.npz is not a readable \.npz file'):
        read_npz_array(str(tmp_path / 'cut.npz'), 'normal')
