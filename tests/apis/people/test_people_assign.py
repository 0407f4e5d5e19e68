"""Overlapping people get disjoint masks, split by their skeletons; pixels outside every box go to nobody."""
import cv2
import numpy as np

from sapiens2.apis.people.assign import assign_masks

LINKS = [(0, 1), (1, 2)]  # head - hip - feet


def two_people():
    """Two standing people (vertical bars 20 px wide) whose boxes overlap by 10 px; a blob far from both boxes."""
    foreground = np.zeros((100, 120), bool)
    foreground[10:90, 20:40] = True
    foreground[10:90, 32:52] = True  # the second person, in front of the first's right side
    foreground[0:5, 110:120] = True  # not a person: in no box
    boxes = np.array([[20, 10, 39, 89], [32, 10, 51, 89]], np.float32)
    keypoints = np.array([[[30, 15], [30, 50], [30, 85]], [[42, 15], [42, 50], [42, 85]]], np.float32)
    return foreground, boxes, keypoints


def test_overlapping_people_get_disjoint_masks_split_between_their_skeletons():
    foreground, boxes, keypoints = two_people()
    masks, scores = assign_masks(foreground, boxes, keypoints, np.ones((2, 3)), 0.3, LINKS)
    assert masks.shape == (2, 100, 120)
    assert not (masks[0] & masks[1]).any()  # a pixel goes to one person or none
    assert ((masks[0] | masks[1]) == (foreground & ~np.pad(np.ones((5, 10), bool), ((0, 95), (110, 0))))).all()
    assert masks[0][:, 20:36].any(0).all() and not masks[0][:, 37:].any()  # split at the middle (x = 36)
    assert masks[1][:, 37:52].any(0).all() and not masks[1][:, :36].any()
    assert (scores == 1).all()  # each skeleton lies in its own mask


def test_people_without_keypoints_are_split_by_their_box_centre_lines_and_scored_by_them():
    foreground, boxes, _ = two_people()
    masks, scores = assign_masks(foreground, boxes)
    assert not (masks[0] & masks[1]).any()
    assert masks[0][50, 25] and masks[1][50, 48]
    assert (scores == 1).all()
    masks, scores = assign_masks(np.zeros_like(foreground), boxes)
    assert not masks.any() and (scores == 0).all()  # no foreground: empty masks that miss their seeds
    assert assign_masks(foreground, np.zeros((0, 4)))[0].shape == (0, 100, 120)


def _all_at_once(foreground, boxes, keypoints, scores):
    """The masks computed with every person's distance map at once (N, H, W), the former way: the reference."""
    from sapiens2.apis.people.assign import box_region, person_seeds
    distances = np.full((len(boxes), ) + foreground.shape, np.inf, np.float32)
    for n, box in enumerate(boxes):
        seeds = person_seeds(foreground.shape, box, keypoints[n], scores[n], 0.3, LINKS)
        distance = cv2.distanceTransform((~seeds).astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
        region = box_region(foreground.shape, box)
        distances[n][region] = distance[region]
    owner = np.argmin(distances, axis=0)
    claimed = np.isfinite(distances.min(axis=0)) & foreground
    return np.stack([claimed & (owner == n) for n in range(len(boxes))])


def test_people_taken_one_at_a_time_get_the_masks_of_all_at_once():
    rng = np.random.default_rng(0)
    foreground = rng.random((90, 110)) < 0.7
    corners = rng.uniform(-10, 100, (12, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(5, 50, (12, 2))], 1).astype(np.float32)
    boxes[3] = boxes[4]  # two people in one box: ties go to the first
    keypoints = boxes[:, None, :2] + rng.uniform(0, 5, (12, 3, 2)).astype(np.float32)
    scores = rng.random((12, 3))
    masks, _ = assign_masks(foreground, boxes, keypoints, scores, 0.3, LINKS)
    np.testing.assert_array_equal(masks, _all_at_once(foreground, boxes, keypoints, scores))
