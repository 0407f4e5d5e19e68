"""Geometry of SynthHumans renderings: normals, depth, masks, part labels and keypoints agree."""
import numpy as np
import pytest

from sapiens2.datasets.synthhumans import render_scene, scene_for

SIZE = (256, 192)


@pytest.fixture(scope='module')
def renderings():
    return [render_scene(scene_for(7, 'train', i, SIZE)) for i in range(6)]


def _rays(K, size):
    v, u = np.mgrid[0:size[0], 0:size[1]].astype(np.float64)
    return np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], -1)


def test_maps_cover_exactly_the_mask(renderings):
    for r in renderings:
        fg = r.mask > 0
        assert fg.any() and not fg.all()
        assert set(np.unique(r.mask)) <= {0, 255}
        assert np.array_equal(r.seg > 0, fg)
        assert np.array_equal(r.instance > 0, fg)
        assert np.all(r.depth[fg] > 0) and np.all(r.depth[~fg] == 0)
        assert np.all(r.normal[~fg] == 0) and np.all(r.albedo[~fg] == 0)
        assert r.seg.max() < 29


def test_normals_unit_and_facing_camera(renderings):
    for r in renderings:
        fg = r.mask > 0
        assert np.allclose(np.linalg.norm(r.normal[fg], axis=1), 1.0, atol=1e-5)
        facing = (r.normal * _rays(r.K, SIZE)).sum(-1)[fg]
        assert np.all(facing <= 1e-6)


def _depth_normals(depth, K):
    points = depth[..., None] * _rays(K, depth.shape)
    du = points[1:-1, 2:] - points[1:-1, :-2]
    dv = points[2:, 1:-1] - points[:-2, 1:-1]
    n = np.cross(dv, du)
    return n / np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-12)


def _smooth_interior(r):
    """Pixels whose 3x3 neighbourhood is one person and one part, away from depth steps."""
    inner = np.ones((SIZE[0] - 2, SIZE[1] - 2), bool)
    z = r.depth
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            win = (slice(dy, dy + SIZE[0] - 2), slice(dx, dx + SIZE[1] - 2))
            inner &= (r.seg[win] == r.seg[1:-1, 1:-1]) & (r.instance[win] == r.instance[1:-1, 1:-1])
            inner &= r.mask[win] > 0
    curv_u = np.abs(z[1:-1, 2:] - 2 * z[1:-1, 1:-1] + z[1:-1, :-2])
    curv_v = np.abs(z[2:, 1:-1] - 2 * z[1:-1, 1:-1] + z[:-2, 1:-1])
    return inner & (curv_u < 0.01) & (curv_v < 0.01)


def test_normals_agree_with_depth(renderings):
    angles = []
    for r in renderings:
        keep = _smooth_interior(r)
        cos = (_depth_normals(r.depth.astype(np.float64), r.K) * r.normal[1:-1, 1:-1]).sum(-1)[keep]
        angles.append(np.degrees(np.arccos(np.clip(cos, -1, 1))))
    angles = np.concatenate(angles)
    assert len(angles) > 5000
    assert np.median(angles) < 3.0
    assert np.mean(angles < 15.0) > 0.95


def test_keypoints_and_boxes(renderings):
    for r in renderings:
        n = len(r.keypoints)
        assert r.keypoints.shape == (n, 308, 3) and 1 <= n <= 3
        assert set(np.unique(r.keypoints[..., 2])) <= {0, 1, 2}
        for i, (kps, bbox, area) in enumerate(zip(r.keypoints, r.bboxes, r.areas)):
            person = r.instance == i + 1
            assert area == person.sum()
            vis = kps[kps[:, 2] == 2]
            if area == 0:
                assert len(vis) == 0
                continue
            ys, xs = np.nonzero(person)
            assert tuple(bbox) == (xs.min(), ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1)
            u, v = np.round(vis[:, 0]).astype(int), np.round(vis[:, 1]).astype(int)
            near = np.zeros(len(vis), bool)
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    near |= person[np.clip(v + dy, 0, SIZE[0] - 1), np.clip(u + dx, 0, SIZE[1] - 1)]
            assert near.all()


def test_people_are_large_and_mostly_visible(renderings):
    heights, visible = [], []
    for r in renderings:
        heights += [b[3] / SIZE[0] for b in r.bboxes if b[3] > 0]
        visible += [(k[:, 2] == 2).sum() for k in r.keypoints]
    assert 0.3 < np.median(heights) < 0.95
    assert np.median(visible) > 60
