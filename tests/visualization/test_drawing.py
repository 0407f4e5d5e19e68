"""Drawing helpers: skeleton colours, palette overlay, normals, depth and albedo pictures."""
import numpy as np
import pytest

from sapiens2.structures.layout import class_palette, keypoint_style
from sapiens2.visualization.dense_maps import (
    albedo_to_bgr,
    depth_bounds,
    depth_to_bgr,
    normals_to_bgr,
    overlay_labels,
    side_by_side,
)
from sapiens2.visualization.keypoints import draw_keypoints


def test_draw_keypoints_paints_visible_points_in_their_bgr_colour_only():
    style = dict(point_colors=np.array([[255, 0, 0], [0, 0, 255]], np.uint8), links=np.array([[0, 1]]),
                 link_colors=np.array([[0, 255, 0]], np.uint8))
    image = np.zeros((40, 60, 3), np.uint8)
    kpts = np.array([[[10, 10], [50, 30]]], np.float32)
    out = draw_keypoints(image, kpts, np.array([[0.9, 0.9]]), style, radius=3, thickness=1)
    assert out[10, 10].tolist() == [0, 0, 255]  # RGB red -> BGR
    assert out[30, 50].tolist() == [255, 0, 0]
    assert out[20, 30, 1] > 100 and out[20, 30, [0, 2]].sum() == 0  # on the (anti-aliased) green link
    assert image.sum() == 0  # input untouched
    hidden = draw_keypoints(image, kpts, np.array([[0.9, 0.1]]), style, radius=3, thickness=1)
    assert hidden[30, 50].sum() == 0 and hidden[20, 30].sum() == 0 and hidden[10, 10].sum() > 0


def test_draw_keypoints_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match='colours'):
        draw_keypoints(np.zeros((8, 8, 3), np.uint8), np.zeros((1, 5, 2)), np.zeros((1, 5)), keypoint_style(None, 308))
    with pytest.raises(ValueError, match=r'\(N, K, 2\)'):
        draw_keypoints(np.zeros((8, 8, 3), np.uint8), np.zeros((1, 5, 2)), np.zeros((1, 4)))


def test_overlay_blends_the_palette_colour():
    image = np.full((2, 2, 3), 100, np.uint8)
    labels = np.array([[0, 1], [2, 28]])
    out = overlay_labels(image, labels, opacity=0.5)
    palette = class_palette(None, 29)
    expected = np.round(100 * 0.5 + palette[labels][..., ::-1] * 0.5)
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(ValueError, match='does not match'):
        overlay_labels(image, np.zeros((3, 3), np.int64))


def test_normals_map_to_the_usual_colours():
    normals = np.zeros((1, 2, 3), np.float32)
    normals[0, 0] = (0, 0, 1)
    normals[0, 1] = (1, 0, 0)
    out = normals_to_bgr(normals, mask=np.array([[True, False]]))
    assert out[0, 0].tolist() == [255, 128, 128]  # RGB (128, 128, 255) as BGR
    assert out[0, 1].tolist() == [0, 0, 0]


def test_depth_turbo_is_red_when_near_and_blue_when_far():
    depth = np.array([[1.0, 5.0, 0.0]], np.float32)
    out = depth_to_bgr(depth, bounds=(1.0, 5.0))
    near, far, background = out[0]
    assert near[2] > near[0] and far[0] > far[2]  # BGR: red near, blue far
    assert background.tolist() == [0, 0, 0]
    low, high = depth_bounds([np.linspace(2, 4, 101, dtype=np.float32)[None]])
    assert low == pytest.approx(2.02) and high == pytest.approx(3.98)


def test_albedo_background_is_grey_and_side_by_side_concatenates():
    albedo = np.array([[[1.0, 0.0, 0.5], [0.2, 0.2, 0.2]]], np.float32)
    out = albedo_to_bgr(albedo, mask=np.array([[True, False]]))
    assert out[0, 0].tolist() == [128, 0, 255] and out[0, 1].tolist() == [100, 100, 100]
    assert side_by_side(out, out).shape == (1, 4, 3)
