"""Identities of pose instances across the frames of a video or stream (numpy + scipy's Hungarian solver).

:class:`PoseTracker` matches each frame's instances to the tracks of the previous frames by the Hungarian algorithm
(``scipy.optimize.linear_sum_assignment``) on a similarity that mixes the object keypoint similarity (OKS, COCO's
formula with the model's own per-keypoint ``sigmas``) and the box IoU, both against where each track is expected to
be (its last box and keypoints moved by the velocity of its box centre). An instance matched to no track starts a
new one; a track unmatched for more than ``max_age`` frames is dropped. mmpose's tracking helpers match greedily on
one of the two.
"""
import colorsys
from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box of ``a`` (A, 4) with every box of ``b`` (B, 4), xyxy: (A, B)."""
    a, b = np.asarray(a, np.float64).reshape(-1, 4), np.asarray(b, np.float64).reshape(-1, 4)
    top_left = np.maximum(a[:, None, :2], b[None, :, :2])
    bottom_right = np.minimum(a[:, None, 2:4], b[None, :, 2:4])
    inter = np.clip(bottom_right - top_left, 0, None).prod(-1)
    area_a = (a[:, 2:4] - a[:, :2]).clip(0).prod(-1)
    area_b = (b[:, 2:4] - b[:, :2]).clip(0).prod(-1)
    union = area_a[:, None] + area_b[None] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def keypoint_similarity(kpts_a: np.ndarray, scores_a: np.ndarray, kpts_b: np.ndarray, scores_b: np.ndarray,
                        areas: np.ndarray, sigmas: np.ndarray, kpt_thr: float = 0.3) -> np.ndarray:
    """OKS of every instance of ``a`` (A, K, 2) with every instance of ``b`` (B, K, 2): (A, B).

    COCO's ``exp(-d^2 / (2 * area * (2 * sigma)^2))`` averaged over the keypoints scored above ``kpt_thr`` in both
    (0 when there is none); ``areas`` (A,) are the box areas of ``a``.
    """
    kpts_a, kpts_b = np.asarray(kpts_a, np.float64), np.asarray(kpts_b, np.float64)
    dist2 = ((kpts_a[:, None] - kpts_b[None]) ** 2).sum(-1)  # (A, B, K)
    variances = (2 * np.asarray(sigmas, np.float64)) ** 2
    similarity = np.exp(-dist2 / (2 * np.maximum(np.asarray(areas, np.float64), 1.0)[:, None, None] * variances))
    valid = (np.asarray(scores_a)[:, None] > kpt_thr) & (np.asarray(scores_b)[None] > kpt_thr)
    count = valid.sum(-1)
    return np.where(count > 0, (similarity * valid).sum(-1) / np.maximum(count, 1), 0.0)


def track_color(track_id: int) -> tuple:
    """A distinct RGB colour per identity (golden-ratio hue steps, saturated and bright)."""
    hue = (int(track_id) * 0.618033988749895) % 1.0
    return tuple(int(round(255 * c)) for c in colorsys.hsv_to_rgb(hue, 0.85, 1.0))


@dataclass
class Track:
    """One identity: its last box (4,) xyxy, keypoints (K, 2) and scores (K,), the frame it was last seen in and the
    velocity (2,) of its box centre in pixels per frame."""
    track_id: int
    bbox: np.ndarray
    keypoints: np.ndarray
    scores: np.ndarray
    last_frame: int
    velocity: np.ndarray

    def predicted(self, frame: int):
        """(box, keypoints) expected at ``frame``: moved at constant velocity."""
        shift = (frame - self.last_frame) * self.velocity
        return self.bbox + np.tile(shift, 2), self.keypoints + shift


class PoseTracker:
    """Gives every pose instance of a stream a ``track_id`` that stays with the person.

    Args:
        sigmas: Per-keypoint OKS sigmas (K,), the model's ``dataset_meta['sigmas']``.
        max_age: Frames a track survives without a match (then a reappearing person gets a new id).
        min_similarity: Lowest combined similarity accepted as a match.
        oks_weight: Weight of the OKS in the similarity; the box IoU has ``1 - oks_weight``.
        kpt_thr: Keypoint score threshold for the OKS.

    Example:
        >>> tracker = PoseTracker(model.dataset_meta['sigmas'])
        >>> ids = tracker.update(result['bboxes'], result['keypoints'], result['keypoint_scores'], frame=0)
    """

    def __init__(self, sigmas: Sequence[float], max_age: int = 30, min_similarity: float = 0.1,
                 oks_weight: float = 0.5, kpt_thr: float = 0.3) -> None:
        if max_age < 0:
            raise ValueError(f'max_age must be >= 0, got {max_age}')
        if not 0.0 <= oks_weight <= 1.0:
            raise ValueError(f'oks_weight must be in [0, 1], got {oks_weight}')
        self.sigmas = np.asarray(sigmas, np.float64)
        self.max_age, self.min_similarity, self.oks_weight, self.kpt_thr = max_age, min_similarity, oks_weight, kpt_thr
        self.tracks: List[Track] = []
        self.next_id = 1
        self.frame = -1

    def similarity(self, bboxes: np.ndarray, keypoints: np.ndarray, scores: np.ndarray, frame: int) -> np.ndarray:
        """Combined similarity (T, N) of the tracks, at their expected place at ``frame``, with N instances."""
        if not self.tracks or not len(bboxes):
            return np.zeros((len(self.tracks), len(bboxes)))
        expected = [track.predicted(frame) for track in self.tracks]
        track_boxes = np.stack([box for box, _ in expected])
        track_kpts = np.stack([kpts for _, kpts in expected])
        areas = (track_boxes[:, 2:4] - track_boxes[:, :2]).clip(1).prod(-1)
        oks = keypoint_similarity(track_kpts, np.stack([t.scores for t in self.tracks]), keypoints, scores, areas,
                                  self.sigmas, self.kpt_thr)
        return self.oks_weight * oks + (1 - self.oks_weight) * box_iou(track_boxes, bboxes)

    def update(self, bboxes: np.ndarray, keypoints: np.ndarray, scores: np.ndarray,
               frame: Optional[int] = None, known_ids: Optional[Sequence[int]] = None) -> np.ndarray:
        """Match one frame's instances (boxes (N, 4+) xyxy, keypoints (N, K, 2), scores (N, K)); return their track
        ids (N,). ``frame`` is the frame index (default: the previous one + 1); gaps (dropped frames) are allowed.
        ``known_ids`` (N,): the track each box was made from (boxes from the tracks' keypoints between detections),
        which the instance continues whatever the similarity: where two people overlap, the pose in a track's box can
        resemble the other track more for a frame."""
        frame = self.frame + 1 if frame is None else int(frame)
        if frame <= self.frame:
            raise ValueError(f'frames must come in order: frame {frame} after frame {self.frame}')
        bboxes = np.asarray(bboxes, np.float64)[:, :4] if len(bboxes) else np.zeros((0, 4))
        keypoints, scores = np.asarray(keypoints, np.float64), np.asarray(scores, np.float64)
        ids = np.zeros(len(bboxes), np.int64)
        if known_ids is not None:  # each box continues the track it was made from: no matching
            by_id = {track.track_id: track for track in self.tracks}
            for col, track_id in enumerate(known_ids):
                if track_id in by_id:
                    self._advance(by_id[track_id], bboxes[col], keypoints[col], scores[col], frame)
                    ids[col] = track_id
        else:
            similarity = self.similarity(bboxes, keypoints, scores, frame)
            from scipy.optimize import linear_sum_assignment  # a second of imports that a photo does not need
            rows, cols = linear_sum_assignment(-similarity) if similarity.size else ((), ())
            for row, col in zip(rows, cols):
                if similarity[row, col] >= self.min_similarity:
                    self._advance(self.tracks[row], bboxes[col], keypoints[col], scores[col], frame)
                    ids[col] = self.tracks[row].track_id
        for col in np.flatnonzero(ids == 0):
            self.tracks.append(Track(self.next_id, bboxes[col], keypoints[col], scores[col], frame, np.zeros(2)))
            ids[col] = self.next_id
            self.next_id += 1
        self.tracks = [t for t in self.tracks if frame - t.last_frame <= self.max_age]
        self.frame = frame
        return ids

    @staticmethod
    def _advance(track: Track, bbox: np.ndarray, keypoints: np.ndarray, scores: np.ndarray, frame: int) -> None:
        shift = (bbox[:2] + bbox[2:4] - track.bbox[:2] - track.bbox[2:4]) / 2
        seen_before = track.velocity.any()
        velocity = shift / (frame - track.last_frame)
        track.velocity = 0.5 * track.velocity + 0.5 * velocity if seen_before else velocity
        track.bbox, track.keypoints, track.scores, track.last_frame = bbox, keypoints, scores, frame
