"""Compose the tasks' per-image results into people: one record per person (``Sapiens2Inferencer(..., people=True)``,
``sapiens2-infer --people``), written under ``<out>/people/`` by the result writer like a task's outputs.

People come from the pose task (boxes, keypoints in the model's layout, track ids in video) or, without pose, from the
user's person boxes. Their masks split the foreground of seg (the seg model's non-background classes) or matting
(alpha > 0.5) (:mod:`.assign`), stabilised per track in video (:mod:`.stabilise`); their 3D keypoints come from the
pointmap (:mod:`.lift3d`), smoothed per track in video. With ``per_person``, each dense map is also cropped to each
person (:mod:`.crops`).
"""
import os.path as osp
import warnings
from typing import Callable, Dict, List, Optional, Sequence, Set

import numpy as np

from sapiens2.structures import layout
from sapiens2.structures.person_boxes import check_person_boxes
from sapiens2.utils.atomic_save import atomic_save_npy
from sapiens2.utils.image_write import write_image
from sapiens2.visualization.dense_maps import side_by_side

from ..io.output_guard import checked
from ..pose_video.tracking import track_color
from .assign import assign_masks, box_region
from .coco_results import update_coco_results
from .crops import CROPPED_MAPS, crop_name, crop_pattern, crop_picture, person_crops
from .draw import draw_instance_masks, draw_skeletons_3d
from .lift3d import lift_keypoints, pointmap_camera
from .ply import write_skeleton_ply
from .record import FOOT_WORDS, HEAD_WORDS, depth_range, height_m, named_indices, person_record
from .stabilise import Keypoint3DSmoother, MaskStabiliser

#: The people's COCO results file in ``<out>/people/``, which every run adds its images to.
COCO_RESULTS = 'coco_results.json'
#: Matting alpha above which a pixel is foreground.
ALPHA_FOREGROUND = 0.5
#: The most bytes the masks of one image's people may take (one byte per person and pixel): 1000 people (the most
#: boxes an image takes) of a 2-megapixel image.
MAX_MASK_BYTES = 2**31


def _check_mask_memory(count: int, shape, frame_name: str) -> None:
    """A ``ValueError`` line when ``count`` people's full-image masks would take more than :data:`MAX_MASK_BYTES`."""
    needed = count * shape[0] * shape[1]
    if needed > MAX_MASK_BYTES:
        raise ValueError(f'{frame_name}: {count} people of a {shape[1]}x{shape[0]} image need {needed / 2**30:.1f} GiB '
                         f'of masks, more than the {MAX_MASK_BYTES / 2**30:.0f} GiB people mode takes for one image; '
                         'give fewer boxes (the most confident ones) or a smaller image')


def background_classes(seg_task) -> List[int]:
    """The seg model's background class ids: those its own class names call ``background``, else class 0."""
    head = getattr(seg_task.model, 'decode_head', None)
    names = layout.class_names(getattr(seg_task.model, 'dataset_meta', None), getattr(head, 'num_classes', None))
    named = [i for i, name in enumerate(names or ()) if name.strip().lower() == 'background']
    return named or [0]


class PeopleWithoutBoxesWarning(UserWarning):
    """People mode on an image without person boxes (no ``--bboxes`` entry, no detector or person finder): with pose
    its one person is the whole image (a mask of everyone), without pose it has nobody."""


class PeopleComposer:
    """The ``people`` outputs of one inferencer call.

    Args:
        tasks: The inferencer's tasks (pose, seg, matting, pointmap are used when there).
        bboxes: The user's person boxes per frame name, for dense tasks without pose.
        detector: Person boxes (N, 4 or 5: xyxy(, score)) of an image, for dense tasks without pose, used for the
            frames ``bboxes`` has no entry for (e.g. an mmdet detector: :func:`~sapiens2.apis.pose_video.topdown.
            detect_persons`).
        per_person: Also crop each dense map that ran to each person (``per_person`` in the result, files
            ``<stem>_person<k>_<task>.png``/``.npy``).
    Raises:
        ValueError: One line, for a combination that gives no person record (no seg, matting or pointmap; no pose and
            no boxes; pointmap alone without pose), or ``per_person`` without a dense map to crop.
    """
    name = 'people'
    raw_suffixes = ('_skeleton3d.ply', )
    raw_patterns: tuple = ()  # with per_person: the crops (crop_pattern)
    index_files = (COCO_RESULTS, )

    def __init__(self, tasks: Sequence, bboxes: Optional[Dict[str, Sequence]] = None, per_person: bool = False,
                 detector: Optional[Callable[[np.ndarray], np.ndarray]] = None) -> None:
        by_name = {task.name: task for task in tasks}
        self.pose, self.seg = by_name.get('pose'), by_name.get('seg')
        self.matting, self.pointmap = by_name.get('matting'), by_name.get('pointmap')
        self.bboxes, self.per_person, self.detector = bboxes or {}, per_person, detector
        if per_person:
            self.raw_patterns = (crop_pattern(), )
        self.dtypes = {name: by_name[name].dtype for name in sorted(by_name) if hasattr(by_name[name], 'dtype')}
        names = sorted(by_name)
        if per_person and not any(name in CROPPED_MAPS for name in names):
            raise ValueError(f'--per-person crops the dense maps, but no dense task runs (tasks {names}); add one or '
                             f'more of --task {" ".join(CROPPED_MAPS)}')
        if not (self.seg or self.matting or self.pointmap):
            raise ValueError(f'people needs a dense task that gives masks (seg, matting) or 3D (pointmap) besides the '
                             f'people, got tasks {names}; add --task seg and/or pointmap')
        if self.pose is None and not self.bboxes and detector is None:
            raise ValueError(f'people needs people: run pose with the dense tasks, or give person boxes (--bboxes) or '
                             f'a person detector (--det-config/--det-checkpoint), got tasks {names} and neither')
        if self.pose is None and not (self.seg or self.matting):
            raise ValueError('people from boxes needs seg or matting for their masks (3D keypoints need pose); add '
                             '--task seg or pose')
        self.kpt_thr = self.pose.kpt_thr if self.pose else 0.3
        self.links = (self.pose.keypoint_style()['links'].tolist() if self.pose else [])
        keypoint_names = self.pose.keypoint_names() if self.pose else None
        self.head, self.feet = named_indices(keypoint_names, HEAD_WORDS), named_indices(keypoint_names, FOOT_WORDS)
        self.background = background_classes(self.seg) if self.seg else []
        self.streams: Dict[str, tuple] = {}
        self._said_without_boxes: Set[str] = set()

    # ----------------------------------------------------------------------------------------- composition
    def foreground(self, results: Dict[str, dict], shape) -> Optional[np.ndarray]:
        """(H, W) bool: the seg model's non-background pixels, else matting's alpha > 0.5; None without either."""
        if 'seg' in results:
            return ~np.isin(results['seg']['labels'], self.background)
        if 'matting' in results:
            return results['matting']['alpha'] > ALPHA_FOREGROUND
        return None

    def people_of(self, results: Dict[str, dict], frame_name: str, image: np.ndarray,
                  source_name: Optional[str] = None) -> dict:
        """Boxes, scores, keypoints and track ids of the frame's people (pose, else the user's boxes, else the
        detector's on ``image``; checked as every person box is: :func:`~sapiens2.structures.person_boxes.
        check_person_boxes`). A frame without boxes is said once per image or video (``source_name``,
        :class:`PeopleWithoutBoxesWarning`): with pose, its person is the whole image; without, it has nobody."""
        pose = results.get('pose')
        if pose is not None:
            if getattr(self.pose, 'find_people', None) is None and self.bboxes.get(frame_name) is None:
                self._without_boxes(source_name or frame_name, 'the whole image is one person, whose mask is all '
                                    'the foreground (everyone in it)')
            return dict(bboxes=np.asarray(pose['bboxes'], np.float32), bbox_scores=pose['bbox_scores'],
                        keypoints=pose['keypoints'], keypoint_scores=pose['keypoint_scores'],
                        track_ids=pose.get('track_ids'))
        given = self.bboxes.get(frame_name)
        if given is None and self.detector is not None:
            given = self.detector(image)
        if given is None:
            self._without_boxes(source_name or frame_name, 'it has no people')
        boxes = check_person_boxes([] if given is None else given, image.shape, frame_name)
        return dict(bboxes=boxes[:, :4], bbox_scores=boxes[:, 4], keypoints=None, keypoint_scores=None,
                    track_ids=None)

    def _without_boxes(self, name: str, outcome: str) -> None:
        """Say, once per image or video ``name``, that it has no person boxes and what its people are then."""
        if name in self._said_without_boxes:
            return
        self._said_without_boxes.add(name)
        warnings.warn(PeopleWithoutBoxesWarning(
            f'{name}: no person boxes (no --bboxes entry and no person detector), so {outcome}; pass --bboxes or '
            '--det-config/--det-checkpoint for one record per person'), stacklevel=2)

    def compose(self, image: np.ndarray, results: Dict[str, dict], frame_name: str = '',
                stream: Optional[tuple] = None) -> dict:
        """The ``people`` result of one frame (see :meth:`add`); ``stream`` = (video name, frame index, fps)."""
        people = self.people_of(results, frame_name, image, stream[0] if stream else frame_name)
        shape = image.shape[:2]
        boxes, keypoints, scores, ids = (people['bboxes'], people['keypoints'], people['keypoint_scores'],
                                         people['track_ids'])
        masks = mask_scores = None
        foreground = self.foreground(results, shape)
        state = self._stream_state(stream)
        if foreground is not None:
            _check_mask_memory(len(boxes), shape, frame_name)
            masks, mask_scores = assign_masks(foreground, boxes, keypoints, scores, self.kpt_thr, self.links)
            if state is not None and ids is not None:
                masks = state[0].update(ids, masks, boxes)
        points = support = None
        pointmap = results.get('pointmap')
        if pointmap is not None and keypoints is not None:
            points, support = self._lift(pointmap, keypoints, scores, masks, boxes)
            if state is not None and ids is not None:
                points = state[1].update(ids, points, stream[1] / stream[2])
        records = []
        for n in range(len(boxes)):
            stats = {}
            if pointmap is not None:
                own = pointmap['valid'] & (masks[n] if masks is not None else box_region(shape, boxes[n]))
                stats['depth_range'] = depth_range(pointmap['pointmap'], own)
                if masks is not None and self._head_and_feet_seen(scores, n):
                    stats['height_m'] = height_m(pointmap['pointmap'], own)
            records.append(person_record(
                None if masks is None else masks[n], None if mask_scores is None else mask_scores[n],
                None if points is None else points[n], None if support is None else scores[n] * support[n], stats))
        crops = None
        if self.per_person:
            own = masks if masks is not None else [box_region(shape, box) for box in boxes]
            crops = [person_crops(results, mask, box) for mask, box in zip(own, boxes)]
        return dict(people, masks=masks, mask_scores=mask_scores, keypoints_3d=points,
                    keypoints_3d_scores=None if support is None else scores * support, records=records,
                    per_person=crops)

    def _lift(self, pointmap: dict, keypoints: np.ndarray, scores: np.ndarray, masks: Optional[np.ndarray],
              boxes: np.ndarray) -> tuple:
        """3D keypoints and their support (:func:`.lift_keypoints`); all NaN where the pointmap implies no camera on
        the people's pixels (none valid)."""
        shape = pointmap['valid'].shape
        people_pixels = np.zeros(shape, bool)
        for n, box in enumerate(boxes):
            people_pixels |= masks[n] if masks is not None else box_region(shape, box)
        try:
            camera = pointmap_camera(pointmap['pointmap'], pointmap['valid'] & people_pixels)  # background: no camera
        except ValueError:
            return np.full(keypoints.shape[:2] + (3, ), np.nan, np.float32), np.zeros(keypoints.shape[:2], np.float32)
        return lift_keypoints(pointmap['pointmap'], pointmap['valid'], keypoints, scores > self.kpt_thr, masks,
                              K=camera)

    def _head_and_feet_seen(self, scores: Optional[np.ndarray], n: int) -> bool:
        return (scores is not None and bool(self.head) and bool(self.feet)
                and (scores[n, self.head] > self.kpt_thr).any() and (scores[n, self.feet] > self.kpt_thr).any())

    def _stream_state(self, stream: Optional[tuple]) -> Optional[tuple]:
        if stream is None:
            return None
        key, frame = stream[0], stream[1]
        state = self.streams.get(key)
        if state is None or frame <= state[2]:
            state = (MaskStabiliser(), Keypoint3DSmoother(), frame)
        self.streams[key] = state = (state[0], state[1], frame)
        return state

    def add(self, source, index: int, image: np.ndarray, results: Dict[str, dict]) -> Dict[str, dict]:
        """``results`` with ``people`` (boxes, keypoints, ``masks`` (N, H, W) bool, ``mask_scores``,
        ``keypoints_3d`` (N, K, 3) metres with NaN, ``keypoints_3d_scores``, ``records``: the JSON-ready person records)
        and, with pose, the records also in the pose result (``people``: written into each pose instance)."""
        stream = (source.name, index, source.fps) if source.kind == 'video' else None
        people = self.compose(image, results, source.frame_name(index), stream)
        results = dict(results, people=people)
        if 'pose' in results:
            results['pose'] = dict(results['pose'], people=people['records'])
        return results

    def end_stream(self, key: str) -> None:
        """Forget the tracks of a finished video."""
        self.streams.pop(key, None)

    # ----------------------------------------------------------------------------------------- outputs
    def colors(self, result: dict) -> List[tuple]:
        """One RGB colour per person: its track's, else its index's."""
        ids = result['track_ids'] if result.get('track_ids') is not None else range(len(result['bboxes']))
        return [track_color(i) for i in ids]

    def visualize(self, image: np.ndarray, result: dict, context: Optional[dict] = None) -> np.ndarray:
        """[instance masks | 3D skeletons] (the 3D view with a pointmap and pose only)."""
        colors = self.colors(result)
        masks = result['masks'] if result['masks'] is not None else np.zeros((0, ) + image.shape[:2], bool)
        picture = draw_instance_masks(image, masks, colors)
        if result['keypoints_3d'] is None:  # no pointmap or no pose: the same for every frame of a video
            return picture
        side = image.shape[0]  # a square view as high as the image
        return side_by_side(picture, draw_skeletons_3d(result['keypoints_3d'], self.links, colors, (side, side)))

    def save(self, image: np.ndarray, result: dict, out_dir: str, stem: str,
             context: Optional[dict] = None) -> List[str]:
        """``<stem>_skeleton3d.ply`` (the 3D skeletons, with a pointmap and pose) and the per-person crops."""
        paths = []
        if result['keypoints_3d'] is not None:
            path = checked(osp.join(out_dir, f'{stem}_skeleton3d.ply'))
            paths.append(write_skeleton_ply(path, result['keypoints_3d'], self.links, self.colors(result)))
        for n, crops in enumerate(result.get('per_person') or ()):
            paths += self.save_crops(image, crops, osp.join(out_dir, crop_name(stem, n, result.get('track_ids'))))
        return paths

    def save_crops(self, image: np.ndarray, crops: dict, prefix: str) -> List[str]:
        """``<prefix>_<task>.npy`` (the cropped map) and ``.png`` (its picture, BGRA) per dense task."""
        y0, y1, x0, x1 = crops['window']
        meta = getattr(getattr(self.seg, 'model', None), 'dataset_meta', None)
        paths = []
        for task in CROPPED_MAPS:
            if task not in crops:
                continue
            path = checked(f'{prefix}_{task}.npy')
            atomic_save_npy(path, crops[task])
            picture = checked(f'{prefix}_{task}.png')
            write_image(picture, crop_picture(image[y0:y1, x0:x1], task, crops[task], meta,
                                              self.background[0] if self.background else 0))
            paths += [path, picture]
        return paths

    def update_index(self, records: List[dict], out_dir: str) -> List[str]:
        """Add this run's images to ``coco_results.json``, the COCO results of every image written to ``out_dir``
        (:func:`.update_coco_results`)."""
        return [update_coco_results(checked(f'{out_dir}/{COCO_RESULTS}'), records)]

    def header(self, image_size: Optional[Sequence[int]]) -> dict:
        """What an image's JSON (and a video's first JSON Lines line, with ``video``) says besides the people
        (``dtype``: the precision each task's model ran in, by task name)."""
        header = dict(image_size=image_size, kpt_thr_used=self.kpt_thr, units='metres, camera frame',
                      dtype=self.dtypes)
        if self.pose is not None:
            header.update(keypoint_names=self.pose.keypoint_names())
        return header

    def frame_record(self, record: dict) -> dict:
        """One image or video frame: its people (with ``track_id`` in video), 2D and 3D keypoints and masks."""
        people = record['result']
        instances = []
        for n, person in enumerate(people['records']):
            instance = dict(bbox=[round(float(v), 2) for v in people['bboxes'][n][:4]],
                            bbox_score=round(float(people['bbox_scores'][n]), 4))
            if people.get('track_ids') is not None:
                instance['track_id'] = int(people['track_ids'][n])
            if people.get('keypoints') is not None:
                instance.update(keypoints=np.round(people['keypoints'][n], 2).tolist(),
                                keypoint_scores=np.round(people['keypoint_scores'][n], 4).tolist())
            instances.append(dict(instance, **person))
        return dict(image_name=record['image_name'], image_size=record['image_size'], instances=instances)
