"""Ground truth through the composition: SynthHumans' depth (as a pointmap), instance masks and visible keypoints
give 3D keypoints within 1 mm of the truth (each keypoint's own surface point on its ray, where the surface is
continuous: another pixel of the person within 3 cm in depth next to it) and, for people whose boxes do not overlap,
masks equal to the ground-truth instances."""
import numpy as np
import pytest

from sapiens2.apis.people.assign import BOX_MARGIN, assign_masks
from sapiens2.apis.people.lift3d import AGREE_M, lift_keypoints, pointmap_camera, sample_at_keypoints
from sapiens2.datasets.synthhumans.generate import scene_for
from sapiens2.datasets.synthhumans.render import render_scene

SIZE = (256, 192)
SCENES = (7, 11, 37)  # validation scenes of seed 0 with 2-3 people


def gt_pointmap(depth: np.ndarray, K: np.ndarray):
    rows, cols = np.mgrid[:depth.shape[0], :depth.shape[1]]
    pointmap = np.stack([(cols - K[0, 2]) / K[0, 0] * depth, (rows - K[1, 2]) / K[1, 1] * depth, depth], -1)
    return pointmap.astype(np.float32), depth > 0


def xyxy(bboxes: np.ndarray) -> np.ndarray:
    return np.concatenate([bboxes[:, :2], bboxes[:, :2] + bboxes[:, 2:] - 1], 1).astype(np.float32)


def widened(box: np.ndarray) -> np.ndarray:
    margin = BOX_MARGIN * np.array([box[2] - box[0], box[3] - box[1]])
    return np.concatenate([box[:2] - margin, box[2:] + margin])


def overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = widened(a), widened(b)
    return bool(a[0] <= b[2] + 1 and b[0] <= a[2] + 1 and a[1] <= b[3] + 1 and b[1] <= a[3] + 1)


def continuous(rendering, rows: np.ndarray, cols: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """(N, K) bool: a 4-neighbour of the keypoint's pixel shows the same person within ``AGREE_M`` in depth."""
    height, width = rendering.depth.shape
    ids = np.arange(1, len(rows) + 1)[:, None]
    near = np.zeros(rows.shape, bool)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        r, c = np.clip(rows + dr, 0, height - 1), np.clip(cols + dc, 0, width - 1)
        near |= (rendering.instance[r, c] == ids) & (np.abs(rendering.depth[r, c] - depth) <= AGREE_M)
    return near


@pytest.fixture(scope='module')
def scenes():
    return [render_scene(scene_for(0, 'val', index, SIZE)) for index in SCENES]


def test_ground_truth_maps_give_3d_keypoints_within_1_mm_and_null_where_unseen(scenes):
    checked = 0
    for rendering in scenes:
        pointmap, valid = gt_pointmap(rendering.depth, rendering.K)
        assert np.allclose(pointmap_camera(pointmap, valid), rendering.K, atol=1e-3)
        masks = np.stack([rendering.instance == n + 1 for n in range(len(rendering.keypoints))])
        keypoints, visible = rendering.keypoints[..., :2], rendering.keypoints[..., 2] == 2
        points, support = lift_keypoints(pointmap, valid, keypoints, visible, masks)
        cols = np.clip(np.round(keypoints[..., 0]).astype(int), 0, SIZE[1] - 1)
        rows = np.clip(np.round(keypoints[..., 1]).astype(int), 0, SIZE[0] - 1)
        own = visible & (rendering.instance[rows, cols] == np.arange(1, len(masks) + 1)[:, None])
        depth = rendering.depth[rows, cols]
        own &= continuous(rendering, rows, cols, depth)
        truth = np.stack([(keypoints[..., 0] - rendering.K[0, 2]) / rendering.K[0, 0] * depth,
                          (keypoints[..., 1] - rendering.K[1, 2]) / rendering.K[1, 1] * depth, depth], -1)
        error = np.linalg.norm(points - truth, axis=-1)
        assert (error[own] < 1e-3).all(), np.sort(error[own])[-5:]
        checked += own.sum()
        assert np.isnan(points[~visible]).all() and (support[~visible] == 0).all()  # not visible: null
        assert not np.isnan(points[visible]).any() or (support[np.isnan(points[..., 0])] == 0).all()
        naive = sample_at_keypoints(pointmap, valid, keypoints, visible)
        assert np.isnan(naive[visible & (depth == 0)]).all()  # the baseline reads the background: invalid
    assert checked > 500


def test_invalid_pointmap_pixels_give_null_keypoints():
    pointmap, valid = gt_pointmap(np.full((40, 30), 2.0, np.float32), np.array([[50, 0, 14.5], [0, 50, 19.5],
                                                                                  [0, 0, 1]]))
    valid[:, :15] = False  # the left half is invalid (e.g. negative depth)
    keypoints = np.array([[[5, 20], [25, 20]]], np.float32)
    points, support = lift_keypoints(pointmap, valid, keypoints, np.ones((1, 2), bool), radius=2)
    assert np.isnan(points[0, 0]).all() and support[0, 0] == 0
    assert np.allclose(points[0, 1], [2 * (25 - 14.5) / 50, 2 * (20 - 19.5) / 50, 2.0]) and support[0, 1] == 1


def test_ground_truth_foreground_gives_the_instances_of_people_apart(scenes):
    apart = 0
    for rendering in scenes:
        boxes = xyxy(rendering.bboxes)
        keypoints, visible = rendering.keypoints[..., :2], (rendering.keypoints[..., 2] == 2).astype(np.float32)
        masks, _ = assign_masks(rendering.instance > 0, boxes, keypoints, visible, 0.5)
        assert not (masks.sum(0) > 1).any()
        for n in range(len(boxes)):
            if not any(overlaps(boxes[n], boxes[m]) for m in range(len(boxes)) if m != n):
                assert (masks[n] == (rendering.instance == n + 1)).all()
                apart += 1
    assert apart >= 1
