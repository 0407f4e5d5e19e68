"""Video: a still person's mask stops changing after warm-up (no flicker at its noisy edge), a moving person's mask
follows it, and 3D keypoints are smoothed per track with unseen keypoints left null."""
import numpy as np

from sapiens2.apis.people.stabilise import Keypoint3DSmoother, MaskStabiliser


def test_a_still_person_with_a_flickering_edge_gets_the_same_mask_every_frame_after_warm_up():
    rng = np.random.default_rng(0)
    body = np.zeros((80, 60), bool)
    body[10:70, 15:45] = True
    edge = body.copy()
    edge[12:68, 17:43] = False  # the 2-pixel rim flickers: each pixel missing in 1 frame of 10 on average
    box = np.array([15, 10, 44, 69], np.float32)
    stabiliser, stable, flickering = MaskStabiliser(), [], []
    for _ in range(40):
        mask = body & ~(edge & (rng.random(body.shape) < 0.1))
        flickering.append(mask)
        stable.append(stabiliser.update([7], mask[None], box[None])[0])
    assert any((a != b).any() for a, b in zip(flickering[10:], flickering[11:]))  # the input flickers
    assert all((stable[10] == frame).all() for frame in stable[10:])  # the output does not
    assert (stable[-1] == body).mean() > 0.99


def test_a_moving_person_is_followed_and_two_tracks_stay_disjoint():
    stabiliser = MaskStabiliser()
    for step in range(10):
        masks = np.zeros((2, 50, 100), bool)
        masks[0, 10:40, 10 + 3 * step:30 + 3 * step] = True
        masks[1, 10:40, 60:80] = True
        boxes = np.array([[10 + 3 * step, 10, 29 + 3 * step, 39], [60, 10, 79, 39]], np.float32)
        out = stabiliser.update([1, 2], masks, boxes)
        assert not (out[0] & out[1]).any()
        iou = (out[0] & masks[0]).sum() / (out[0] | masks[0]).sum()
        assert iou > 0.9, (step, iou)


def test_3d_keypoints_are_smoothed_per_track_and_unseen_ones_stay_null():
    rng = np.random.default_rng(1)
    smoother = Keypoint3DSmoother()
    truth = np.array([[0.0, 0.0, 3.0], [0.1, 0.5, 3.0]])
    raw, out = [], []
    for frame in range(30):
        points = (truth + rng.normal(0, 0.02, truth.shape))[None].astype(np.float32)
        if frame % 5 == 0:
            points[0, 1] = np.nan
        raw.append(points)
        out.append(smoother.update([3], points, frame / 10))
    raw, out = np.concatenate(raw), np.concatenate(out)
    assert np.isnan(out[::5, 1]).all() and not np.isnan(out[:, 0]).any()
    raw_error = np.linalg.norm(raw[10:, 0] - truth[0], axis=-1).mean()
    assert np.linalg.norm(out[10:, 0] - truth[0], axis=-1).mean() < 0.7 * raw_error
