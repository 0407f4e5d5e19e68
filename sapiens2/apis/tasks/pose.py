"""Top-down pose inference in the model's own keypoint layout: person boxes (user, detector, person finder or whole
image) -> keypoints."""
from functools import partial
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from torch import nn

from sapiens2.registry import INFERENCE_TASKS
from sapiens2.structures import layout
from sapiens2.structures.keypoint_formats import keypoint_format as get_keypoint_format
from sapiens2.visualization.keypoints import draw_keypoints
from sapiens2.visualization.panels import Panel, PanelOptions

from ..notices import Notices
from ..person_finder import DEFAULT_FINDER, ForegroundPersonFinder
from ..pose_video.stream import PoseStream, StreamOptions
from ..pose_video.topdown import detect_persons, init_person_detector, pose_crops, pose_of_crops
from ..pose_video.tracking import track_color
from .base import BaseInferenceTask


def pose_panel(image: np.ndarray, result: dict, mask: Optional[np.ndarray], options: PanelOptions) -> np.ndarray:
    """The composite's skeleton: the layout's style (``options.meta``), 2 px lines and points at 384 px."""
    size = max(1, int(round(image.shape[0] / 192)))
    style = layout.keypoint_style(options.meta, result['keypoints'].shape[1])
    return draw_keypoints(image, result['keypoints'], result['keypoint_scores'], style, kpt_thr=options.kpt_thr,
                          radius=size, thickness=size, bboxes=result.get('bboxes'))


@INFERENCE_TASKS.register_module()
class PoseInferenceTask(BaseInferenceTask):
    """Top-down pose (the official ``vis_pose.py``) over
    :func:`sapiens2.apis.pose_video.topdown.inference_pose_topdown`.

    Boxes per image: the user's (``bboxes`` of :meth:`predict`, checked), else the detector's (when configured),
    else the person finder's (the shipped matting model's person regions,
    :class:`~sapiens2.apis.person_finder.ForegroundPersonFinder`), else (``person_finder=None``) the whole image. A
    frame where the detector or finder finds nobody gets an empty result and a logged notice. Crops run through
    the config's test pipeline and ``model.test_step`` (flip test and the codec's decoding as configured).
    Result: ``bboxes`` (N, 4) xyxy, ``bbox_scores`` (N,), ``keypoints`` (N, K, 2) image pixels,
    ``keypoint_scores`` (N, K), K and their order those of the model's layout (its ``dataset_meta``, from the
    checkpoint or the config; :mod:`sapiens2.structures.layout`). Its JSON records (:meth:`header`,
    :meth:`frame_record`) are written as ``<name>.json`` per image and JSON Lines per video (the result writer), with
    ``keypoint_names``; it draws the skeleton in the layout's colours and links
    (:meth:`keypoint_style`).

    Args:
        kpt_thr: Keypoint score threshold for drawing (recorded in the JSON as ``kpt_thr_used``).
        det_config, det_checkpoint: An mmdet person detector (e.g. the official RTMDet-m); optional.
        person_finder: Without a detector, the alias or config of the foreground model whose person regions are the
            boxes (default ``matting-tiny``); None: the whole image is one box.
        bbox_thr, nms_thr: Detector score threshold and box-NMS IoU (official 0.3 / 0.3).
        batch_size: Person crops per forward.
        radius, thickness: Drawing sizes (default proportional to the image).
        keypoint_format: Return, draw and write the keypoints in another layout (``coco17``, ``coco_wholebody``,
            ``body25``, ``openpose``; :mod:`sapiens2.structures.keypoint_formats`) instead of the 308; only for a
            model that predicts the 308 keypoints.
        track: In videos and streams, give every instance a ``track_id`` that stays with the person
            (:mod:`sapiens2.apis.pose_video.stream`); drawn as one colour per track.
        smooth, min_cutoff, beta, lag: Smoothing of the tracked keypoints and boxes (videos and streams only):
            two-sided One-Euro in video files, waiting ``lag`` seconds for later frames; causal for live input, by a
            constant-velocity Kalman filter unless One-Euro settings are given
            (:class:`~sapiens2.apis.pose_video.stream.StreamOptions`).
        max_age: Frames a lost track is kept. det_interval: Run the detector every that many frames of a video and
            take the boxes in between from the tracked keypoints.
    """
    name = 'pose'
    head_types = ('Sapiens2HeatmapHead', 'HeatmapHead')
    accepts_bboxes = True
    panel = Panel('pose skeleton', pose_panel)

    def __init__(self, model: nn.Module, cfg, dtype: str = 'fp32', kpt_thr: float = 0.3,
                 det_config: Optional[str] = None, det_checkpoint: Optional[str] = None, bbox_thr: float = 0.3,
                 nms_thr: float = 0.3, person_finder: Optional[str] = DEFAULT_FINDER, batch_size: int = 8,
                 radius: Optional[int] = None, thickness: Optional[int] = None,
                 keypoint_format: Optional[str] = None, track: bool = True, smooth: bool = True,
                 min_cutoff: Optional[float] = StreamOptions.min_cutoff, beta: Optional[float] = StreamOptions.beta,
                 max_age: int = StreamOptions.max_age, det_interval: int = StreamOptions.det_interval,
                 lag: Optional[float] = StreamOptions.lag) -> None:
        super().__init__(model, cfg, dtype)
        if not getattr(model, 'dataset_meta', None):
            raise ValueError('the pose model has no dataset_meta (keypoint names, flip indices); build it with '
                             'sapiens2.apis.init_model')
        self.detector = init_person_detector(det_config, det_checkpoint, str(self.device)) if det_config else None
        self.find_people: Optional[Callable[[np.ndarray], np.ndarray]] = None  # image -> boxes (N, 5)
        self.nobody_found = ''
        if self.detector is not None:
            self.find_people = partial(detect_persons, self.detector, score_thr=bbox_thr, nms_thr=nms_thr)
            self.nobody_found = f'the person detector found nobody (score > {bbox_thr})'
        elif person_finder:
            self.find_people = ForegroundPersonFinder(person_finder, device=str(self.device))
            self.nobody_found = f'{self.find_people!r} found nobody'
        self.kpt_thr, self.bbox_thr, self.nms_thr, self.batch_size = kpt_thr, bbox_thr, nms_thr, batch_size
        self.radius, self.thickness = radius, thickness
        self.keypoint_format = get_keypoint_format(keypoint_format) if keypoint_format else None
        meta = model.dataset_meta
        # the count the model predicts (its head's channels), checked against the metainfo's names where they are used
        predicted = getattr(getattr(model, 'head', None), 'out_channels', None)
        self.num_keypoints = int(predicted if isinstance(predicted, int) else
                                 meta.get('num_keypoints') or len(layout.keypoint_names(meta) or ()))
        if self.keypoint_format is not None and not layout.is_keypoints308(meta, self.num_keypoints):
            raise ValueError(f'keypoint format {keypoint_format!r} converts the Sapiens2 308 keypoints, but this model '
                             f'predicts {self.num_keypoints} keypoints of its own layout '
                             f'({meta.get("dataset_name", "its dataset_meta")}); drop --keypoint-format')
        self.stream_options = (StreamOptions(smooth, min_cutoff, beta, max_age, det_interval, lag) if track
                               else None)
        if det_interval > 1 and self.find_people is None:
            raise ValueError(f'det_interval {det_interval} needs a person detector (--det-config/--det-checkpoint)')
        self.streams: Dict[str, PoseStream] = {}
        self.notices = Notices()

    def predict(self, images: List[np.ndarray], bboxes: Optional[Sequence] = None,
                names: Optional[Sequence[str]] = None, streams: Optional[Sequence] = None, **kwargs) -> List[dict]:
        """``bboxes[i]``: the person boxes of ``images[i]`` ([x1, y1, x2, y2(, score)] each) or None;
        ``names[i]`` names the image in notices and errors; ``streams[i]``: ``(stream name, frame index, fps, live)``
        when ``images[i]`` is a frame of a video or stream (tracked and smoothed, frames of a stream in order; see
        :meth:`settle` for the final results of video files), else None. The person crops of the images that are no
        stream frames go through the model together, ``batch_size`` crops per forward whichever image they are of."""
        bboxes = bboxes if bboxes is not None else [None] * len(images)
        names = names if names is not None else [f'image {i}' for i in range(len(images))]
        streams = streams if streams is not None else [None] * len(images)
        results: List[Optional[dict]] = [None] * len(images)
        alone = [i for i, stream in enumerate(streams) if stream is None or self.stream_options is None]
        crops = [self._crops(images[i], bboxes[i], names[i], streams[i][0] if streams[i] else None) for i in alone]
        with self.autocast():
            samples = iter(pose_of_crops(self.model, [crop for image_crops in crops for crop in image_crops],
                                         self.batch_size, self.pipeline))
        for i, image_crops in zip(alone, crops):
            stream = streams[i]
            results[i] = self._as_result([next(samples) for _ in image_crops], bboxes[i], names[i],
                                         stream[0] if stream else None)
        for i, stream in enumerate(streams):
            if results[i] is None:
                results[i] = self._predict_frame(images[i], bboxes[i], names[i], stream)
        return [self._in_format(result) for result in results]

    def _predict_frame(self, image: np.ndarray, boxes, name: str, stream: Optional[Tuple[str, int, float]]) -> dict:
        if stream is None or self.stream_options is None:
            return self._predict_one(image, boxes, name, stream[0] if stream else None)
        key, frame, fps, live = stream
        state = self.streams.get(key)
        if state is None or frame <= state.last_frame:  # a new stream, or the same name read again
            sigmas = layout.keypoint_sigmas(self.model.dataset_meta, self.num_keypoints)
            state = self.streams[key] = PoseStream(sigmas, fps, self.stream_options, self.kpt_thr, live)
        if boxes is None and self.find_people is not None:
            if state.needs_detection(frame):
                boxes = self.find_people(image)
                state.detected(frame)
            else:
                boxes = state.boxes_from_tracks(image.shape)
        return state.update(self._predict_one(image, boxes, name, key), frame)

    def settled_until(self, stream: str) -> Optional[int]:
        state = self.streams.get(stream)
        return state.settled_until if state is not None else None

    def settle(self, stream: str, frame: int, result: dict) -> dict:
        state = self.streams.get(stream)
        settled = state.settle(frame) if state is not None else None
        return result if settled is None else self._in_format(settled)

    def end_stream(self, key: str) -> None:
        """Forget the tracks of a finished stream."""
        self.streams.pop(key, None)

    def _in_format(self, result: dict) -> dict:
        if self.keypoint_format is None:
            return result
        keypoints, scores = self.keypoint_format.convert(result['keypoints'], result['keypoint_scores'])
        return dict(result, keypoints=keypoints, keypoint_scores=scores)

    def _crops(self, image: np.ndarray, boxes, name: str, stream: Optional[str] = None) -> List[dict]:
        if boxes is None and self.find_people is not None:
            boxes = self.find_people(image)
        with self.autocast():
            return pose_crops(self.model, image, boxes, name=name, notices=self.notices, stream=stream)

    def _predict_one(self, image: np.ndarray, boxes, name: str, stream: Optional[str] = None) -> dict:
        crops = self._crops(image, boxes, name, stream)
        with self.autocast():
            samples = pose_of_crops(self.model, crops, self.batch_size, self.pipeline)
        return self._as_result(samples, boxes, name, stream)

    def _as_result(self, samples: list, boxes, name: str, stream: Optional[str] = None) -> dict:
        """The result dict of an image's pose samples (none: an empty result, and a notice when the detector or
        person finder found nobody)."""
        if not samples:
            if boxes is None or (self.find_people is not None and not len(boxes)):
                once = f' (shown once for {stream})' if stream else ''
                self.notices.warn(f'nobody:{stream or name}', f'{name}: {self.nobody_found}; no pose for this '
                                  f'frame{once}')
            return dict(bboxes=np.zeros((0, 4), np.float32), bbox_scores=np.zeros(0, np.float32),
                        keypoints=np.zeros((0, self.num_keypoints, 2), np.float32),
                        keypoint_scores=np.zeros((0, self.num_keypoints), np.float32))
        pred = [sample.pred_instances for sample in samples]
        return dict(bboxes=np.concatenate([p.bboxes for p in pred]).astype(np.float32),
                    bbox_scores=np.concatenate([p.bbox_scores for p in pred]).astype(np.float32),
                    keypoints=np.concatenate([p.keypoints for p in pred]).astype(np.float32),
                    keypoint_scores=np.concatenate([p.keypoint_scores for p in pred]).astype(np.float32))

    def keypoint_style(self) -> dict:
        """Colours and links the pictures are drawn with (:func:`sapiens2.visualization.keypoints.draw_keypoints`):
        the keypoint format's, else the model's layout's; override to colour differently (e.g. per track)."""
        if self.keypoint_format is not None:
            return self.keypoint_format.style()
        return layout.keypoint_style(self.model.dataset_meta, self.num_keypoints)

    def keypoint_names(self) -> Optional[List[str]]:
        """Names of the returned keypoints, in order (None for a model without keypoint metainfo)."""
        if self.keypoint_format is not None:
            return list(self.keypoint_format.keypoint_names)
        return layout.keypoint_names(self.model.dataset_meta, self.num_keypoints)

    def visualize(self, image: np.ndarray, result: dict, context: Optional[dict] = None) -> np.ndarray:
        colors = [track_color(i) for i in result['track_ids']] if 'track_ids' in result else None
        return draw_keypoints(image, result['keypoints'], result['keypoint_scores'], style=self.keypoint_style(),
                              kpt_thr=self.kpt_thr, radius=self.radius, thickness=self.thickness,
                              bboxes=result['bboxes'], instance_colors=colors)

    def header(self, image_size: Optional[Sequence[int]]) -> dict:
        """What an image's JSON (and a video's first JSON Lines line, with ``video``) says besides the instances:
        {image_size, num_keypoints, kpt_thr_used, dtype(, keypoint_format, keypoint_names)} (sizes are [width, height];
        dtype: the precision the model ran in)."""
        names = self.keypoint_names()
        num_keypoints = len(self.keypoint_format.keypoint_names) if self.keypoint_format else self.num_keypoints
        header = dict(image_size=image_size, num_keypoints=num_keypoints, kpt_thr_used=self.kpt_thr,
                      dtype=self.dtype)
        if self.keypoint_format is not None:
            header.update(keypoint_format=self.keypoint_format.name)
        if names is not None:
            header.update(keypoint_names=names)
        return header

    def frame_record(self, record: dict) -> dict:
        """One image or video frame: {image_name, image_size, instances: [{bbox, bbox_score, keypoints,
        keypoint_scores(, track_id)}]}."""
        return dict(image_name=record['image_name'], image_size=record['image_size'],
                    instances=_instances(record['result']))


def _instances(result: dict) -> List[dict]:
    instances = [dict(bbox=[round(float(v), 2) for v in box], bbox_score=round(float(score), 4),
                      keypoints=np.round(kpts, 2).tolist(), keypoint_scores=np.round(scores, 4).tolist())
                 for box, score, kpts, scores in zip(result['bboxes'], result['bbox_scores'], result['keypoints'],
                                                     result['keypoint_scores'])]
    for instance, track_id in zip(instances, result.get('track_ids', ())):
        instance['track_id'] = int(track_id)
    for instance, person in zip(instances, result.get('people', ())):  # --people: mask, keypoints_3d...
        instance.update(person)
    return instances
