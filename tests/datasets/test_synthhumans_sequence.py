"""SynthHumans clips: deterministic, per-frame ground truth, people walking and two people crossing."""
import numpy as np
import pytest

from sapiens2.datasets.synthhumans.sequence import clip_scenes, render_clip


@pytest.fixture(scope='module')
def crossing():
    return render_clip('crossing', num_frames=6, size=(96, 128), seed=0)


def test_crossing_clip_ground_truth(crossing):
    assert crossing.frames.shape == (6, 96, 128, 3) and crossing.frames.dtype == np.uint8
    assert crossing.keypoints.shape == (6, 2, 308, 3) and crossing.bboxes.shape == (6, 2, 4)
    assert list(crossing.track_ids) == [0, 1]
    # The two people walk in opposite directions and swap sides: their order along x flips.
    centre_x = crossing.keypoints[..., 0].mean(-1)  # (T, N)
    steps = np.sign(np.diff(centre_x, axis=0))
    assert np.all(steps[:, 0] == steps[0, 0]) and np.all(steps[:, 1] == -steps[0, 0])
    assert np.sign(centre_x[0, 0] - centre_x[0, 1]) == -np.sign(centre_x[-1, 0] - centre_x[-1, 1])
    # Boxes are xyxy around all keypoints of each person; the nearer person hides part of the other one mid-way.
    np.testing.assert_allclose(crossing.bboxes[..., :2], crossing.keypoints[..., :2].min(2))
    np.testing.assert_allclose(crossing.bboxes[..., 2:], crossing.keypoints[..., :2].max(2))
    occluded = (crossing.keypoints[..., 2] == 1).mean(-1)  # (T, N) share of keypoints hidden
    assert occluded[:, 1].max() > occluded[:, 1].min() + 0.1
    # The frames move: consecutive frames differ.
    assert all(np.abs(crossing.frames[t + 1].astype(int) - crossing.frames[t]).mean() > 1 for t in range(5))


def test_clips_are_deterministic_and_walkers_move_their_limbs():
    first, again = clip_scenes('walk', 4, (64, 48), seed=3), clip_scenes('walk', 4, (64, 48), seed=3)
    assert first == again and len(first[0].persons) == 1
    hips = [scene.persons[0].pose.left['hip_flex'] for scene in first]
    assert np.ptp(hips) > 0.2  # the legs swing
    with pytest.raises(ValueError, match='kind'):
        clip_scenes('dance', 4, (64, 48))
