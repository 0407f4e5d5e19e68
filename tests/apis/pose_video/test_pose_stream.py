"""PoseStream: track ids and smoothing per stream, the detector schedule of det_interval, boxes from keypoints."""
import numpy as np
import pytest

from sapiens2.apis.pose_video.stream import PoseStream, StreamOptions

K = 6


def result(*centres, jitter=0.0, seed=0):
    rng = np.random.default_rng(seed)
    kpts = np.array([[[cx + dx, cy + dy] for dx, dy in zip(np.linspace(-10, 10, K), np.linspace(-30, 30, K))]
                     for cx, cy in centres], np.float32).reshape(-1, K, 2)
    kpts += rng.normal(0, jitter, kpts.shape).astype(np.float32)
    boxes = np.array([[cx - 15, cy - 40, cx + 15, cy + 40] for cx, cy in centres], np.float32).reshape(-1, 4)
    return dict(bboxes=boxes, bbox_scores=np.ones(len(centres), np.float32), keypoints=kpts,
                keypoint_scores=np.full((len(centres), K), 0.9, np.float32))


def test_track_ids_and_smoothing():
    raw = PoseStream(np.full(K, 0.05), fps=10, options=StreamOptions(smooth=False))
    smooth = PoseStream(np.full(K, 0.05), fps=10)
    jitter_raw = jitter_smooth = 0.0
    previous = {}
    for t in range(12):
        frame = result((50 + 3 * t, 60), (150 - 3 * t, 60), jitter=2.0, seed=t)
        out_raw, out_smooth = raw.update(frame, t), smooth.update(frame, t)
        assert list(out_raw['track_ids']) == [1, 2] and list(out_smooth['track_ids']) == [1, 2]
        np.testing.assert_array_equal(out_raw['keypoints'], frame['keypoints'])  # smooth=False: untouched
        if t:
            jitter_raw += np.abs(out_raw['keypoints'] - previous['raw']).mean()
            jitter_smooth += np.abs(out_smooth['keypoints'] - previous['smooth']).mean()
        previous = dict(raw=out_raw['keypoints'], smooth=out_smooth['keypoints'])
        assert out_smooth['bboxes'].shape == (2, 4)
    assert jitter_smooth < jitter_raw


def test_det_interval_schedule_and_boxes_from_keypoints():
    stream = PoseStream(np.full(K, 0.05), fps=10, options=StreamOptions(det_interval=3))
    assert stream.needs_detection(0)
    stream.detected(0)
    stream.update(result((50, 60)), 0)
    assert not stream.needs_detection(1) and not stream.needs_detection(2) and stream.needs_detection(3)
    boxes = stream.boxes_from_tracks((100, 120))
    # Keypoints span x 40..60 and y 30..90: a 10 % margin each side, clipped to the 120x100 image, mean score.
    np.testing.assert_allclose(boxes, [[38, 24, 62, 96, 0.9]], atol=1e-4)
    stream.update(result(), 1)  # nobody found: the next frame runs the detector again
    assert stream.needs_detection(2) and len(stream.boxes_from_tracks((100, 120))) == 0


def test_options_are_checked():
    with pytest.raises(ValueError, match='det_interval'):
        StreamOptions(det_interval=0)
    with pytest.raises(ValueError, match='min_cutoff'):
        StreamOptions(min_cutoff=-1)


def test_boxes_follow_the_keypoints_when_only_some_are_confident():
    stream = PoseStream(np.full(K, 0.05), fps=10, options=StreamOptions(det_interval=5))
    for t, cx in enumerate((50, 56)):
        frame = result((cx, 60))
        frame['keypoint_scores'][:, 3:] = 0.1  # only the top 3 keypoints (the "face") are confident
        stream.update(frame, t)
    # Their box would be the head only: the previous box moves by their displacement (6 px right) instead, clipped
    # to the image (y2 = H - 1).
    np.testing.assert_allclose(stream.boxes_from_tracks((100, 120))[0, :4], [56 - 15 + 6, 20, 56 + 15 + 6, 99])


def test_video_files_are_smoothed_two_sided_and_live_input_causally():
    video = PoseStream(np.full(K, 0.05), fps=10)
    live = PoseStream(np.full(K, 0.05), fps=10, live=True)
    assert (video.lag_frames, live.lag_frames) == (10, 0) and (video.min_cutoff, live.min_cutoff) == (1.5, 1.0)
    frames = [result((50 + 3 * t, 60), (150 - 3 * t, 60), jitter=2.0, seed=t) for t in range(30)]
    truth = [result((50 + 3 * t, 60), (150 - 3 * t, 60))['keypoints'] for t in range(30)]
    settled, causal = {}, []
    for t, frame in enumerate(frames):
        causal.append(video.update(frame, t)['keypoints'])
        assert video.settled_until == t - 10
        if t >= 10:
            settled[t - 10] = video.settle(t - 10)
        assert live.update(frame, t) is not None and live.settle(t) is None  # live results are final at once
    settled.update((t, video.settle(t)) for t in range(20, 30))  # the end of the video: fewer later frames
    assert sorted(settled) == list(range(30)) and not video.records
    assert all(list(settled[t]['track_ids']) == [1, 2] for t in settled)
    error = {name: np.mean([np.abs(k - truth[t]).mean() for t, k in enumerate(series)])
             for name, series in dict(raw=[f['keypoints'] for f in frames], causal=causal,
                                      two_sided=[settled[t]['keypoints'] for t in range(30)]).items()}
    assert error['two_sided'] < error['raw'] and error['two_sided'] < error['causal']  # no lag behind the motion
    assert video.settle(3) is None  # settled already


def test_live_input_is_smoothed_by_the_kalman_filter_unless_one_euro_settings_are_given():
    live, one_euro = (PoseStream(np.full(K, 0.05), fps=10, live=True, options=StreamOptions(min_cutoff=m))
                      for m in (None, 1.0))
    assert live.kalman and not one_euro.kalman and not PoseStream(np.full(K, 0.05), fps=10).kalman  # files: two-sided
    frames = [result((50 + 3 * t, 60), (150 - 3 * t, 60), jitter=2.0, seed=t) for t in range(30)]
    truth = [result((50 + 3 * t, 60), (150 - 3 * t, 60))['keypoints'] for t in range(30)]
    error = {name: np.mean([np.abs(stream.update(f, t)['keypoints'] - truth[t]).mean()
                            for t, f in enumerate(frames)][10:]) for name, stream in dict(kalman=live,
                                                                                          one_euro=one_euro).items()}
    raw = np.mean([np.abs(f['keypoints'] - truth[t]).mean() for t, f in enumerate(frames)][10:])
    assert error['kalman'] < raw and error['kalman'] < error['one_euro']  # One-Euro trails the steady walk


def test_the_lag_is_checked():
    with pytest.raises(ValueError, match='lag'):
        StreamOptions(lag=-1)
    assert PoseStream(np.full(K, 0.05), fps=30, options=StreamOptions(lag=0.5)).lag_frames == 15
    assert PoseStream(np.full(K, 0.05), fps=30, options=StreamOptions(lag=0.5, smooth=False)).lag_frames == 0


def test_frames_predicted_ahead_of_settling_are_kept():
    """The inferencer predicts a batch of frames before it settles the earlier ones."""
    ahead, in_step = PoseStream(np.full(K, 0.05), fps=10), PoseStream(np.full(K, 0.05), fps=10)
    frames = [result((50 + 3 * t, 60), jitter=2.0, seed=t) for t in range(24)]
    settled_ahead, settled_in_step = {}, {}
    for start in range(0, 24, 8):  # batches of 8 frames, each settled after the whole batch
        for t in range(start, start + 8):
            in_step.update(frames[t], t)
            settled_in_step.update((f, in_step.settle(f)) for f in range(max(0, in_step.settled_until), t + 1)
                                   if f <= in_step.settled_until and f not in settled_in_step)
            ahead.update(frames[t], t)
        settled_ahead.update((f, ahead.settle(f)) for f in range(0, ahead.settled_until + 1) if f not in settled_ahead)
    assert sorted(settled_ahead) == list(range(14))
    for f in settled_ahead:
        np.testing.assert_allclose(settled_ahead[f]['keypoints'], settled_in_step[f]['keypoints'])


def test_crossing_people_keep_their_ids_and_boxes_between_detections():
    """Two overlapping walkers: between detections the pose found in each box is the other person's (as a small
    model's can be); each box still continues its own track, at that track's velocity."""
    stream = PoseStream(np.full(K, 0.05), fps=10, options=StreamOptions(det_interval=4, smooth=False))
    for t in range(2):  # detections: walker 1 moves right, walker 2 left, 4 px a frame, boxes overlapping
        stream.detected(t)
        assert list(stream.update(result((50 + 4 * t, 60), (62 - 4 * t, 60)), t)['track_ids']) == [1, 2]
    assert not stream.needs_detection(2)
    boxes = stream.boxes_from_tracks((120, 160))
    np.testing.assert_allclose(boxes[:, 0], [50 + 8 - 15, 62 - 8 - 15])  # constant velocity, not the keypoints
    swapped = result((62 - 8, 60), (50 + 8, 60))  # the keypoints of the neighbour in each box
    swapped['bboxes'] = boxes[:, :4]
    assert list(stream.update(swapped, 2)['track_ids']) == [1, 2]
