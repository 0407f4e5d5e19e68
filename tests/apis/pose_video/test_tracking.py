"""PoseTracker: Hungarian matching on OKS and box IoU, new and lost tracks, identities through crossing paths."""
import numpy as np
import pytest

from sapiens2.apis.pose_video.tracking import PoseTracker, box_iou, keypoint_similarity, track_color

SIGMAS = np.full(5, 0.05)


def person(cx, cy, size=40.0):
    """A box and 5 keypoints (in a cross) of a person centred at (cx, cy)."""
    offsets = np.array([[0, -0.4], [-0.3, 0], [0.3, 0], [0, 0.4], [0, 0]]) * size
    return np.array([cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2]), offsets + [cx, cy]


def frame(*people):
    boxes, kpts = zip(*(person(*p) for p in people)) if people else ((), ())
    return np.array(boxes).reshape(-1, 4), np.array(kpts).reshape(-1, 5, 2), np.ones((len(people), 5))


def test_box_iou_and_oks():
    a = np.array([[0, 0, 10, 10]])
    iou = box_iou(a, np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]]))
    np.testing.assert_allclose(iou, [[1.0, 50 / 150, 0.0]])
    _, kpts, scores = frame((50, 50))
    oks = keypoint_similarity(kpts, scores, np.concatenate([kpts, kpts + 4]), np.ones((2, 5)), np.array([1600.0]),
                              SIGMAS)
    assert oks[0, 0] == pytest.approx(1.0) and 0 < oks[0, 1] < 1
    # Keypoints scored below the threshold in either instance do not count; none at all gives 0.
    assert keypoint_similarity(kpts, scores * 0, kpts, scores, np.array([1600.0]), SIGMAS)[0, 0] == 0


def test_identities_follow_people_whatever_their_order():
    tracker = PoseTracker(SIGMAS)
    rng = np.random.default_rng(0)
    for t in range(20):
        # Two people crossing: one walks right, one left, at different heights; the order of the detections is random.
        people = [(20 + 6 * t, 60), (134 - 6 * t, 80)]
        order = rng.permutation(2)
        boxes, kpts, scores = frame(*[people[i] for i in order])
        ids = tracker.update(boxes, kpts, scores, frame=t)
        assert list(ids[np.argsort(order)]) == [1, 2]


def test_new_and_lost_tracks():
    tracker = PoseTracker(SIGMAS, max_age=2)
    assert list(tracker.update(*frame((50, 50)))) == [1]
    assert list(tracker.update(*frame((52, 50), (150, 50)))) == [1, 2]  # a newcomer gets a new id
    assert list(tracker.update(*frame((150, 50)))) == [2]  # person 1 missed once: still tracked
    assert list(tracker.update(*frame((54, 50), (150, 50)))) == [1, 2]  # ...and found again within max_age
    for _ in range(3):
        tracker.update(*frame((150, 50)))
    assert [t.track_id for t in tracker.tracks] == [2]  # person 1 lost for more than max_age frames: dropped
    assert list(tracker.update(*frame((54, 50), (150, 50)))) == [3, 2]
    assert len(tracker.update(*frame())) == 0


def test_frames_must_come_in_order_and_gaps_are_allowed():
    tracker = PoseTracker(SIGMAS)
    tracker.update(*frame((50, 50)), frame=3)
    assert list(tracker.update(*frame((60, 50)), frame=7)) == [1]  # dropped frames in between
    with pytest.raises(ValueError, match='in order'):
        tracker.update(*frame((60, 50)), frame=7)


def test_track_colours_differ():
    colors = {track_color(i) for i in range(1, 11)}
    assert len(colors) == 10 and all(0 <= c <= 255 for color in colors for c in color)
