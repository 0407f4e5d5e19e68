"""The per-stream stage of pose inference (videos, GIFs, webcams, streams; images skip it): identities, smoothing,
and person boxes between detector runs.

For each frame, :meth:`PoseStream.update` gives every instance a ``track_id`` (:class:`~.tracking.PoseTracker`) and,
with ``smooth``, filters its keypoints and box with a One-Euro filter of its own track
(:class:`~.smoothing.OneEuroFilter`, time = frame index / fps, speeds in box heights per second). In video files
the smoothing is two-sided: :meth:`PoseStream.settle` gives a frame's final result once ``lag`` seconds of later
frames are in (:func:`~.smoothing.two_sided`); live input is smoothed causally, with no wait, by a constant-velocity
Kalman filter (:class:`~.kalman.ConstantVelocityFilter`, no lag on steady motion; One-Euro when its settings are
given). With ``det_interval`` N > 1 the person detector runs on every N-th frame only (and whenever no track was
seen in the previous frame); :meth:`PoseStream.boxes_from_tracks` gives the boxes of the frames in between from the
keypoints of the previous frame, as RTMPose's pipeline does: the box around them when they span most of the person,
else the previous box moved as they moved (a model sure of the face only would otherwise shrink the box to the
head).
"""
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .kalman import ConstantVelocityFilter
from .smoothing import DEFAULT_BETA, DEFAULT_MIN_CUTOFF, TWO_SIDED_BETA, TWO_SIDED_MIN_CUTOFF, OneEuroFilter, two_sided
from .tracking import PoseTracker, box_iou

#: Margin added on each side of the box around a track's keypoints, as a fraction of its width and height (keypoints
#: are joint centres; the body reaches beyond them).
KEYPOINT_BOX_MARGIN = 0.1
#: The box around the confident keypoints replaces the previous box when it has at least this share of its width and
#: of its height.
KEYPOINT_BOX_MIN_SHARE = 0.6
#: A track whose box overlaps another's by more than this IoU moves at its constant velocity between detections: the
#: keypoints found in its box may be the other person's.
CROWDED_IOU = 0.3
#: Seconds of later frames that two-sided smoothing of video files waits for (live input: none).
DEFAULT_LAG_S = 1.0
#: Frames beyond the lag whose results wait for :meth:`PoseStream.settle` (batches predicted ahead); older ones are
#: dropped, so a caller that never settles keeps a bounded history.
UNSETTLED_FRAMES_KEPT = 256


@dataclass(frozen=True)
class StreamOptions:
    """Options of the per-stream stage (``PoseInferenceTask`` arguments of the same names).

    ``smooth``: filter the keypoints and boxes (``min_cutoff`` Hz, ``beta``: the One-Euro filter's settings; None:
    the two-sided filter's defaults in video files, the Kalman filter for causal smoothing); ``lag``: seconds of
    later frames the smoothing of a video file waits for (None: ``DEFAULT_LAG_S`` for files, 0 for live input; 0:
    causal); ``max_age``: frames a lost track is kept; ``det_interval``: run the person detector every that many
    frames.
    """
    smooth: bool = True
    min_cutoff: Optional[float] = None
    beta: Optional[float] = None
    max_age: int = 30
    det_interval: int = 1
    lag: Optional[float] = None

    def __post_init__(self) -> None:
        if self.det_interval < 1:
            raise ValueError(f'det_interval must be >= 1, got {self.det_interval}')
        if self.lag is not None and not 0 <= self.lag <= 60:
            raise ValueError(f'the smoothing lag (--smooth-lag) must be between 0 and 60 seconds, got {self.lag}')
        OneEuroFilter(*self.filter_parameters(two_sided=True))  # checks the filter's parameters once, at construction

    def filter_parameters(self, two_sided: bool) -> Tuple[float, float]:
        """(min_cutoff, beta): the options, or the defaults of the causal or two-sided filter."""
        defaults = (TWO_SIDED_MIN_CUTOFF, TWO_SIDED_BETA) if two_sided else (DEFAULT_MIN_CUTOFF, DEFAULT_BETA)
        return (self.min_cutoff if self.min_cutoff is not None else defaults[0],
                self.beta if self.beta is not None else defaults[1])


@dataclass
class _FrameRecord:
    """What two-sided smoothing keeps of a frame: its result (causally smoothed) and the unsmoothed values."""
    result: dict
    keypoints: np.ndarray  # (N, K, 2) as predicted
    boxes: np.ndarray  # (N, 2, 2) as predicted
    scales: np.ndarray  # (N,) box heights


class PoseStream:
    """Tracking and smoothing state of one stream.

    Args:
        sigmas: The model's per-keypoint OKS sigmas.
        fps: Frame rate of the stream (frame index / fps is the filters' time).
        options: :class:`StreamOptions`.
        kpt_thr: Keypoint score threshold for matching and for the boxes from keypoints.
        live: Live input (causal smoothing unless ``options.lag`` says otherwise).
    """

    def __init__(self, sigmas: Sequence[float], fps: float, options: StreamOptions = StreamOptions(),
                 kpt_thr: float = 0.3, live: bool = False) -> None:
        self.options, self.fps, self.kpt_thr = options, float(fps), kpt_thr
        lag = options.lag if options.lag is not None else (0.0 if live else DEFAULT_LAG_S)
        #: Frames of a video whose results may still change: frame t is final once frame t + lag_frames is in.
        self.lag_frames = math.ceil(lag * self.fps) if options.smooth else 0
        self.min_cutoff, self.beta = options.filter_parameters(two_sided=self.lag_frames > 0)
        #: Causal smoothing without One-Euro settings: the constant-velocity Kalman filter.
        self.kalman = self.lag_frames == 0 and options.min_cutoff is None and options.beta is None
        self.records: Dict[int, _FrameRecord] = {}
        self.tracker = PoseTracker(sigmas, max_age=options.max_age, kpt_thr=kpt_thr)
        self.filters: Dict[int, tuple] = {}  # track id -> (keypoint filter, box filter)
        self.previous: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}  # track id -> keypoints and scores a frame earlier
        self.last_detection: Optional[int] = None
        self.last_frame = -1
        self.box_track_ids: Optional[List[int]] = None  # the tracks of the boxes_from_tracks the next frame runs on

    def needs_detection(self, frame: int) -> bool:
        """Whether the detector runs on ``frame`` (always with ``det_interval`` 1)."""
        interval = self.options.det_interval
        return (interval == 1 or self.last_detection is None or frame - self.last_detection >= interval
                or not any(t.last_frame == self.last_frame for t in self.tracker.tracks))

    def detected(self, frame: int) -> None:
        """Record that the detector ran on ``frame``."""
        self.last_detection = frame

    def boxes_from_tracks(self, image_shape: Sequence[int]) -> np.ndarray:
        """Boxes (N, 5) [x1, y1, x2, y2, score] of the tracks seen in the previous frame with at least 3 keypoints
        scored above ``kpt_thr``: moved at constant velocity when it overlaps another track by more than
        ``CROWDED_IOU``, else around those keypoints with a margin when they span at least
        ``KEYPOINT_BOX_MIN_SHARE`` of the previous box's width and height, else the previous box moved by their median
        displacement since the frame before; clipped to the image. The next :meth:`update` keeps each box's track."""
        height, width = image_shape[:2]
        boxes, self.box_track_ids = [], []
        current = [track for track in self.tracker.tracks if track.last_frame == self.last_frame]
        overlap = box_iou([t.bbox[:4] for t in current], [t.bbox[:4] for t in current]) if current else None
        for i, track in enumerate(current):
            visible = track.scores > self.kpt_thr
            if visible.sum() < 3:
                continue
            if np.delete(overlap[i], i).max(initial=0.0) > CROWDED_IOU:
                x1, y1, x2, y2 = track.predicted(self.last_frame + 1)[0][:4]
            else:
                x1, y1, x2, y2 = self._keypoint_box(track, visible)
            box = [max(x1, 0), max(y1, 0), min(x2, width - 1), min(y2, height - 1), float(track.scores[visible].mean())]
            if box[2] > box[0] and box[3] > box[1]:
                boxes.append(box)
                self.box_track_ids.append(track.track_id)
        return np.asarray(boxes, np.float32).reshape(-1, 5)

    def _keypoint_box(self, track, visible: np.ndarray) -> np.ndarray:
        """xyxy around the ``visible`` keypoints with a margin when they span at least ``KEYPOINT_BOX_MIN_SHARE`` of
        the track's box, else its box moved by their median displacement."""
        points = track.keypoints[visible]
        (x1, y1), (x2, y2) = points.min(0), points.max(0)
        if np.all([x2 - x1, y2 - y1] >= KEYPOINT_BOX_MIN_SHARE * (track.bbox[2:4] - track.bbox[:2])):
            margin_x, margin_y = KEYPOINT_BOX_MARGIN * (x2 - x1), KEYPOINT_BOX_MARGIN * (y2 - y1)
            return np.array([x1 - margin_x, y1 - margin_y, x2 + margin_x, y2 + margin_y])
        return track.bbox[:4] + np.tile(self._displacement(track), 2)

    def _displacement(self, track) -> np.ndarray:
        """Median motion (2,) of the keypoints confident in the track's last two frames (0 without them)."""
        if track.track_id not in self.previous:
            return np.zeros(2)
        keypoints, scores = self.previous[track.track_id]
        both = (scores > self.kpt_thr) & (track.scores > self.kpt_thr)
        return np.median(track.keypoints[both] - keypoints[both], axis=0) if both.sum() >= 3 else np.zeros(2)

    def update(self, result: dict, frame: int) -> dict:
        """``result`` (``bboxes``, ``keypoints``, ``keypoint_scores``...) of ``frame`` with ``track_ids`` (N,) and,
        with ``smooth``, causally smoothed ``keypoints`` and ``bboxes`` (final with no lag, else see :meth:`settle`)."""
        self.previous = {t.track_id: (t.keypoints, t.scores) for t in self.tracker.tracks}
        known, self.box_track_ids = self.box_track_ids, None
        if known is not None and len(known) != len(result['bboxes']):
            known = None  # not one instance per box made: match them instead
        ids = self.tracker.update(result['bboxes'], result['keypoints'], result['keypoint_scores'], frame, known)
        self.last_frame = frame
        predicted = dict(result, track_ids=ids)
        result = dict(predicted)
        if self.options.smooth:
            result.update(self._smoothed(result, ids, frame / self.fps))
        alive = {t.track_id for t in self.tracker.tracks}
        self.filters = {i: f for i, f in self.filters.items() if i in alive}
        if self.lag_frames:
            oldest = frame - self.lag_frames - UNSETTLED_FRAMES_KEPT  # a caller may predict ahead of settling
            self.records = {t: record for t, record in self.records.items() if t >= oldest}
            boxes = np.asarray(predicted['bboxes'], np.float64)[..., :4].reshape(len(ids), 4)
            self.records[frame] = _FrameRecord(result, np.asarray(predicted['keypoints'], np.float64),
                                               boxes.reshape(-1, 2, 2), np.maximum(boxes[:, 3] - boxes[:, 1], 1.0))
        return result

    @property
    def settled_until(self) -> int:
        """The last frame whose result :meth:`settle` gives as final now."""
        return self.last_frame - self.lag_frames

    def settle(self, frame: int) -> Optional[dict]:
        """The final result of ``frame``: with a lag, the one :meth:`update` gave with its keypoints and boxes smoothed
        two-sided over the frames up to ``lag_frames`` later that are in (fewer at the end of a video); None when
        :meth:`update` gave the final result already."""
        record = self.records.pop(frame, None)
        if record is None:
            return None
        later = [(t, self.records[t]) for t in sorted(self.records) if frame < t <= frame + self.lag_frames]
        keypoints = np.array(record.result['keypoints'], np.float64)
        bboxes = np.array(record.result['bboxes'], np.float64)
        for n, track_id in enumerate(record.result['track_ids']):
            steps = [(frame, record, n)] + [(t, r, int(np.flatnonzero(r.result['track_ids'] == track_id)[0]))
                                            for t, r in later if track_id in r.result['track_ids']]
            times = [t / self.fps for t, _, _ in steps]
            scales = [r.scales[m] for _, r, m in steps]
            keypoints[n] = two_sided(keypoints[n], [r.keypoints[m] for _, r, m in steps], times, scales,
                                     self.min_cutoff, self.beta)
            bboxes[n, :4] = two_sided(bboxes[n, :4].reshape(2, 2), [r.boxes[m] for _, r, m in steps], times, scales,
                                      self.min_cutoff, self.beta).reshape(4)
        return dict(record.result, keypoints=keypoints.astype(np.float32), bboxes=bboxes.astype(np.float32))

    def _new_filter(self):
        return ConstantVelocityFilter() if self.kalman else OneEuroFilter(self.min_cutoff, self.beta)

    def _smoothed(self, result: dict, ids: np.ndarray, time: float) -> dict:
        keypoints = np.array(result['keypoints'], np.float64)
        bboxes = np.array(result['bboxes'], np.float64)
        for n, track_id in enumerate(ids):
            if track_id not in self.filters:
                self.filters[track_id] = (self._new_filter(), self._new_filter())
            keypoint_filter, box_filter = self.filters[track_id]
            scale = max(bboxes[n, 3] - bboxes[n, 1], 1.0)
            keypoints[n] = keypoint_filter(keypoints[n], time, scale)
            bboxes[n, :4] = box_filter(bboxes[n, :4].reshape(2, 2), time, scale).reshape(4)
        return dict(keypoints=keypoints.astype(np.float32), bboxes=bboxes.astype(np.float32))
