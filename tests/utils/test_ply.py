"""PLY writing without open3d."""
import numpy as np
import pytest

from sapiens2.utils.ply import read_ply, write_ply


def test_round_trip_with_colours(tmp_path):
    points = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
    colors = np.random.default_rng(1).integers(0, 255, (50, 3), dtype=np.uint8)
    path = write_ply(str(tmp_path / 'a.ply'), points, colors)
    with open(path, 'rb') as f:
        assert f.read(3) == b'ply'
    data = read_ply(path)
    np.testing.assert_array_equal(data['points'], points)
    np.testing.assert_array_equal(data['colors'], colors)


def test_points_only_and_mismatch(tmp_path):
    data = read_ply(write_ply(str(tmp_path / 'b.ply'), np.ones((4, 3))))
    assert data['points'].shape == (4, 3) and data['colors'] is None
    with pytest.raises(ValueError, match='colours'):
        write_ply(str(tmp_path / 'c.ply'), np.ones((4, 3)), np.ones((3, 3)))
