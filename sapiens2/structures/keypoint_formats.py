"""The 308 Sapiens2 keypoints in the layouts people use: COCO-17, COCO-WholeBody-133, OpenPose BODY_25 and OpenPose
BODY_25 + face (70) + hands (2 x 21).

Every point of a target layout has a fixed recipe over the 308 named keypoints (``keypoints308.json`` metadata):

* **same**: the 308 point naming the same landmark (e.g. COCO ``left_wrist``);
* **derived**: a fixed combination of named landmarks, e.g. OpenPose ``Neck`` = mean of the shoulders (how OpenPose
  defines it), or a face contour point halfway between two named ones;
* **none**: no counterpart (e.g. the 16 jaw-contour points of the 68-point face): written as (0, 0) with score 0, the
  way COCO and OpenPose write missing points.

Converted coordinates are the weighted sums; a derived point's score is the lowest score of its sources. The choice
of every face and hand point is documented in docs/pose.md (section "Keypoint formats").
"""
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from sapiens2.metainfo import load_metainfo

Recipe = Tuple[Tuple[str, float], ...]  # (308 keypoint name, weight) pairs; empty = no counterpart
NUM_SOURCE = 308

COCO17_NAMES = ('nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear', 'left_shoulder', 'right_shoulder',
                'left_elbow', 'right_elbow', 'left_wrist', 'right_wrist', 'left_hip', 'right_hip', 'left_knee',
                'right_knee', 'left_ankle', 'right_ankle')
FOOT_NAMES = ('left_big_toe', 'left_small_toe', 'left_heel', 'right_big_toe', 'right_small_toe', 'right_heel')
FINGERS = ('thumb', 'forefinger', 'middle_finger', 'ring_finger', 'pinky_finger')
COCO17_LINKS = (('left_ankle', 'left_knee'), ('left_knee', 'left_hip'), ('right_ankle', 'right_knee'),
                ('right_knee', 'right_hip'), ('left_hip', 'right_hip'), ('left_shoulder', 'left_hip'),
                ('right_shoulder', 'right_hip'), ('left_shoulder', 'right_shoulder'), ('left_shoulder', 'left_elbow'),
                ('right_shoulder', 'right_elbow'), ('left_elbow', 'left_wrist'), ('right_elbow', 'right_wrist'),
                ('left_eye', 'right_eye'), ('nose', 'left_eye'), ('nose', 'right_eye'), ('left_eye', 'left_ear'),
                ('right_eye', 'right_ear'), ('left_ear', 'left_shoulder'), ('right_ear', 'right_shoulder'))
# OpenPose BODY_25: (name, recipe source(s) among the 308 names).
BODY25 = (('Nose', ('nose', )), ('Neck', ('left_shoulder', 'right_shoulder')),
          ('RShoulder', ('right_shoulder', )), ('RElbow', ('right_elbow', )), ('RWrist', ('right_wrist', )),
          ('LShoulder', ('left_shoulder', )), ('LElbow', ('left_elbow', )), ('LWrist', ('left_wrist', )),
          ('MidHip', ('left_hip', 'right_hip')), ('RHip', ('right_hip', )), ('RKnee', ('right_knee', )),
          ('RAnkle', ('right_ankle', )), ('LHip', ('left_hip', )), ('LKnee', ('left_knee', )),
          ('LAnkle', ('left_ankle', )), ('REye', ('right_eye', )), ('LEye', ('left_eye', )),
          ('REar', ('right_ear', )), ('LEar', ('left_ear', )), ('LBigToe', ('left_big_toe', )),
          ('LSmallToe', ('left_small_toe', )), ('LHeel', ('left_heel', )), ('RBigToe', ('right_big_toe', )),
          ('RSmallToe', ('right_small_toe', )), ('RHeel', ('right_heel', )))
BODY25_LINKS = (('Neck', 'MidHip'), ('Neck', 'RShoulder'), ('Neck', 'LShoulder'), ('RShoulder', 'RElbow'),
                ('RElbow', 'RWrist'), ('LShoulder', 'LElbow'), ('LElbow', 'LWrist'), ('MidHip', 'RHip'),
                ('RHip', 'RKnee'), ('RKnee', 'RAnkle'), ('MidHip', 'LHip'), ('LHip', 'LKnee'), ('LKnee', 'LAnkle'),
                ('Neck', 'Nose'), ('Nose', 'REye'), ('REye', 'REar'), ('Nose', 'LEye'), ('LEye', 'LEar'),
                ('LAnkle', 'LBigToe'), ('LBigToe', 'LSmallToe'), ('LAnkle', 'LHeel'), ('RAnkle', 'RBigToe'),
                ('RBigToe', 'RSmallToe'), ('RAnkle', 'RHeel'))


def _same(name: str) -> Recipe:
    return ((name, 1.0), )


def _between(a: str, b: str, t: float = 0.5) -> Recipe:
    """The point at fraction ``t`` from ``a`` to ``b``."""
    return ((a, 1.0 - t), (b, t))


def _face68() -> Dict[int, Recipe]:
    """The 68-point (iBUG / 300-W) face of COCO-WholeBody and OpenPose: index -> recipe; absent = no counterpart.

    Indices follow the image of a frontal face, 0 at its left, i.e. the person's right: 17-21 right brow (outer ->
    inner), 22-26 left brow, 27-30 nose bridge (top -> tip), 31-35 nose base (right -> left), 36-41 right eye (36
    outer corner, 39 inner), 42-47 left eye (42 inner, 45 outer), 48-59 outer lips (48 right corner, 51 top, 54 left
    corner, 57 bottom), 60-67 inner lips (60 right corner, 62 top, 64 left corner, 66 bottom).
    """
    face = {8: _same('tip_of_chin'), 27: _same('center_of_nose_root'), 30: _same('tip_of_nose'),
            28: _between('center_of_nose_root', 'tip_of_nose', 1 / 3),
            29: _between('center_of_nose_root', 'tip_of_nose', 2 / 3), 33: _same('bottom_center_of_nose'),
            51: _same('center_of_cupid_bow'), 57: _same('center_of_lower_outer_lip'),
            62: _same('center_of_upper_inner_lip'), 66: _same('center_of_lower_inner_lip')}
    for side, brow, eye, nose, mouth in (('r', range(17, 22), (36, 39), (31, 32), (48, 60)),
                                         ('l', range(26, 21, -1), (45, 42), (35, 34), (54, 64))):
        end, middle, start = f'end_of_{side}_eyebrow', f'upper_midpoint_1_of_{side}_eyebrow', \
            f'upper_startpoint_of_{side}_eyebrow'
        brow = list(brow)  # outer end -> inner end
        face.update({brow[0]: _same(end), brow[1]: _between(end, middle), brow[2]: _same(middle),
                     brow[3]: _between(middle, start), brow[4]: _same(start)})
        face[eye[0]] = _same(f'{side}_outer_end_of_upper_lash_line')
        face[eye[1]] = _same(f'{side}_inner_end_of_upper_lash_line')
        face[nose[0]] = _same(f'outer_corner_of_{side}_nostril')
        face[nose[1]] = _between(f'outer_corner_of_{side}_nostril', 'bottom_center_of_nose')
        face[mouth[0]] = _same(f'{side}_outer_corner_of_mouth')
        face[mouth[1]] = _same(f'{side}_inner_corner_of_mouth')
    face[61] = _between('r_inner_corner_of_mouth', 'center_of_upper_inner_lip')
    face[63] = _between('center_of_upper_inner_lip', 'l_inner_corner_of_mouth')
    face[65] = _between('l_inner_corner_of_mouth', 'center_of_lower_inner_lip')
    face[67] = _between('center_of_lower_inner_lip', 'r_inner_corner_of_mouth')
    return face


def ibug68_flip(index: int) -> int:
    """The mirror partner of a 68-point face index (itself on the centre line); 68/69 (OpenPose pupils) swap."""
    pairs = [(i, 16 - i) for i in range(17)] + [(i, 43 - i) for i in range(17, 27)] + \
        [(i, 66 - i) for i in range(31, 36)] + [(36, 45), (37, 44), (38, 43), (39, 42), (40, 47), (41, 46)] + \
        [(i, 102 - i) for i in range(48, 55)] + [(55, 59), (56, 58), (60, 64), (61, 63), (65, 67), (68, 69)]
    mirror = {i: i for i in range(70)}
    for a, b in pairs:
        mirror[a], mirror[b] = b, a
    return mirror[index]


def _hand(side: str) -> List[Tuple[str, Recipe]]:
    """21 hand points, COCO-WholeBody names and order (= OpenPose hand order).

    The root is the wrist. ``<finger>1`` (the knuckle: CMC for the thumb, MCP otherwise) is the 308
    ``<finger>_third_joint``: the 308 sigmas of the third joints are exactly COCO-WholeBody's ``<finger>1`` sigmas,
    and ``<finger>2..4`` share their names with the 308 set.
    """
    points = [(f'{side}_hand_root', _same(f'{side}_wrist'))]
    for finger in FINGERS:
        points.append((f'{side}_{finger}1', _same(f'{side}_{finger}_third_joint')))
        points += [(f'{side}_{finger}{k}', _same(f'{side}_{finger}{k}')) for k in (2, 3, 4)]
    return points


def _hand_links(side: str) -> List[Tuple[str, str]]:
    links = []
    for finger in FINGERS:
        chain = [f'{side}_hand_root'] + [f'{side}_{finger}{k}' for k in range(1, 5)]
        links += list(zip(chain[:-1], chain[1:]))
    return links


def mirror_name(name: str) -> str:
    """The name of the mirror-image point of a target layout (left <-> right, L <-> R, iBUG face partner)."""
    if name.startswith('face-'):
        return f'face-{ibug68_flip(int(name[5:]))}'
    for a, b in (('left', 'right'), ('right', 'left')):
        if name.startswith(f'{a}_'):
            return b + name[len(a):]
    if name[:1] in 'LR' and name[1:2].isupper():
        return {'L': 'R', 'R': 'L'}[name[0]] + name[1:]
    return name


@dataclass(frozen=True)
class KeypointFormat:
    """A target layout and the recipe of each of its points over the 308 keypoints.

    Attributes:
        name: Format name (``coco17``, ``coco_wholebody``, ``body25``, ``openpose``).
        keypoint_names: Target point names, in order.
        recipes: Per target point, ``((308 name, weight), ...)``; empty for points without counterpart.
        parts: ``{part: (start, stop)}`` index ranges (``body``, ``foot``, ``face``, ``left_hand``, ``right_hand``).
        links: Skeleton links as name pairs (for drawing).
    """
    name: str
    keypoint_names: Tuple[str, ...]
    recipes: Tuple[Recipe, ...]
    parts: Dict[str, Tuple[int, int]]
    links: Tuple[Tuple[str, str], ...]

    @property
    def num_keypoints(self) -> int:
        return len(self.keypoint_names)

    @cached_property
    def _sources(self) -> Tuple[np.ndarray, np.ndarray]:
        """(K, S) 308 indices and weights (weight 0 = padding)."""
        index = {name: i for i, name in enumerate(load_metainfo('keypoints308.json')['keypoint_names'])}
        width = max(len(recipe) for recipe in self.recipes)
        sources = np.zeros((self.num_keypoints, width), dtype=np.int64)
        weights = np.zeros((self.num_keypoints, width), dtype=np.float64)
        for k, recipe in enumerate(self.recipes):
            for s, (name, weight) in enumerate(recipe):
                sources[k, s], weights[k, s] = index[name], weight
        return sources, weights

    @property
    def mapped(self) -> np.ndarray:
        """(K,) bool: the points with a recipe (same or derived)."""
        return np.array([bool(recipe) for recipe in self.recipes])

    def kind(self, index: int) -> str:
        """``'same'``, ``'derived'`` or ``'none'`` for a target point."""
        recipe = self.recipes[index]
        return 'none' if not recipe else 'same' if len(recipe) == 1 else 'derived'

    @property
    def unmapped_names(self) -> List[str]:
        return [name for name, recipe in zip(self.keypoint_names, self.recipes) if not recipe]

    @property
    def flip_indices(self) -> List[int]:
        """Index of each point's mirror image (for flip tests and mirrored drawing)."""
        index = {name: i for i, name in enumerate(self.keypoint_names)}
        return [index[mirror_name(name)] for name in self.keypoint_names]

    def part_indices(self, part: str, mapped_only: bool = False) -> List[int]:
        if part not in self.parts:
            raise KeyError(f'{self.name} has no part {part!r}; its parts: {sorted(self.parts)}')
        start, stop = self.parts[part]
        return [i for i in range(start, stop) if self.recipes[i] or not mapped_only]

    def convert(self, keypoints, scores=None) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """308-layout ``keypoints`` (..., 308, D) and optional ``scores`` (..., 308) -> this layout (..., K, D) and
        (..., K), float32. Points without counterpart are 0 with score 0."""
        keypoints = np.asarray(keypoints, dtype=np.float64)
        if keypoints.ndim < 2 or keypoints.shape[-2] != NUM_SOURCE:
            raise ValueError(f'{self.name}: expected keypoints of shape (..., {NUM_SOURCE}, D) in the Sapiens2 308 '
                             f'layout, got {keypoints.shape}')
        sources, weights = self._sources
        valid = weights > 0
        gathered = np.where(valid[..., None], keypoints[..., sources, :], 0.0)
        converted = (gathered * weights[..., None]).sum(axis=-2).astype(np.float32)
        if scores is None:
            return converted, None
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != keypoints.shape[:-1]:
            raise ValueError(f'{self.name}: scores must have shape {keypoints.shape[:-1]}, got {scores.shape}')
        lowest = np.where(valid, scores[..., sources], np.inf).min(axis=-1)
        return converted, np.where(np.isfinite(lowest), lowest, 0.0).astype(np.float32)

    def style(self) -> dict:
        """Drawing style for :func:`sapiens2.visualization.keypoints.draw_keypoints`: each point takes the colour of
        its first 308 source (grey without counterpart); each link the colour of the 308 skeleton's link between its
        ends' first sources (COCO-17: mmpose's COCO colours, left limbs green, right orange, the rest blue), else
        the colour of its first end."""
        meta = load_metainfo('keypoints308.json')
        colors = [info['color'] for info in meta['keypoint_info']]
        link_colors308 = {frozenset(link['link']): link['color'] for link in meta['skeleton_links']}
        sources, _ = self._sources
        points = np.array([colors[sources[k, 0]] if recipe else (128, 128, 128)
                           for k, recipe in enumerate(self.recipes)], dtype=np.uint8)
        index = {name: i for i, name in enumerate(self.keypoint_names)}
        links = np.array([(index[a], index[b]) for a, b in self.links], dtype=np.int64).reshape(-1, 2)
        link_colors = np.array([link_colors308.get(frozenset((sources[a, 0], sources[b, 0])), points[a])
                                if self.recipes[a] and self.recipes[b] else points[a] for a, b in links],
                               dtype=np.uint8).reshape(-1, 3)
        return dict(point_colors=points, links=links, link_colors=link_colors)


def _format(name: str, parts: Sequence[Tuple[str, List[Tuple[str, Recipe]]]], links) -> KeypointFormat:
    names, recipes, ranges = [], [], {}
    for part, points in parts:
        ranges[part] = (len(names), len(names) + len(points))
        for point_name, recipe in points:
            names.append(point_name)
            recipes.append(recipe)
    return KeypointFormat(name, tuple(names), tuple(recipes), ranges, tuple(links))


def _face_points(count: int) -> List[Tuple[str, Recipe]]:
    face = _face68()
    face.update({68: _same('r_center_of_pupil'), 69: _same('l_center_of_pupil')})
    return [(f'face-{i}', face.get(i, ())) for i in range(count)]


@lru_cache(maxsize=None)
def _build(name: str) -> KeypointFormat:
    body17 = [(n, _same(n)) for n in COCO17_NAMES]
    body25 = [(n, tuple((s, 1.0 / len(srcs)) for s in srcs)) for n, srcs in BODY25]
    hand_links = _hand_links('left') + _hand_links('right')
    if name == 'coco17':
        return _format(name, [('body', body17)], COCO17_LINKS)
    if name == 'coco_wholebody':
        feet = [(n, _same(n)) for n in FOOT_NAMES]
        foot_links = [(f'{s}_ankle', f'{s}_{p}') for s in ('left', 'right') for p in ('big_toe', 'small_toe', 'heel')]
        parts = [('body', body17), ('foot', feet), ('face', _face_points(68)), ('left_hand', _hand('left')),
                 ('right_hand', _hand('right'))]
        return _format(name, parts, COCO17_LINKS + tuple(foot_links) + tuple(hand_links))
    if name == 'body25':
        return _format(name, [('body', body25)], BODY25_LINKS)
    if name == 'openpose':
        return _format(name, [('body', body25), ('face', _face_points(70)), ('left_hand', _hand('left')),
                              ('right_hand', _hand('right'))], BODY25_LINKS + tuple(hand_links))
    raise KeyError(name)


FORMAT_NAMES = ('coco17', 'coco_wholebody', 'body25', 'openpose')
ALIASES = {'coco': 'coco17', 'coco_wholebody133': 'coco_wholebody', 'wholebody': 'coco_wholebody',
           'openpose_body25': 'body25'}


def keypoint_format(name: str) -> KeypointFormat:
    """The format called ``name`` (see :data:`FORMAT_NAMES`; aliases :data:`ALIASES`)."""
    resolved = ALIASES.get(name, name)
    if resolved not in FORMAT_NAMES:
        raise ValueError(f'Unknown keypoint format {name!r}; choose one of {list(FORMAT_NAMES)} '
                         f'(aliases: {sorted(ALIASES)}).')
    return _build(resolved)


def convert_keypoints(keypoints, scores=None, keypoint_format_name: str = 'coco17'):
    """Shortcut for ``keypoint_format(keypoint_format_name).convert(keypoints, scores)``."""
    return keypoint_format(keypoint_format_name).convert(keypoints, scores)


OPENPOSE_JSON_PARTS = (('body', 'pose_keypoints_2d'), ('face', 'face_keypoints_2d'),
                       ('left_hand', 'hand_left_keypoints_2d'), ('right_hand', 'hand_right_keypoints_2d'))


def to_openpose_json(keypoints, scores) -> dict:
    """OpenPose's per-image JSON (``version`` 1.3, one entry of ``people`` per instance, flat [x, y, score, ...]
    arrays) from 308-keypoint predictions ``keypoints`` (N, 308, 2) and ``scores`` (N, 308)."""
    converted, converted_scores = keypoint_format('openpose').convert(keypoints, scores)
    parts = keypoint_format('openpose').parts
    people = []
    for points, point_scores in zip(converted, converted_scores):
        person = {'person_id': [-1]}
        for part, key in OPENPOSE_JSON_PARTS:
            start, stop = parts[part]
            triples = np.concatenate([points[start:stop, :2], point_scores[start:stop, None]], axis=1)
            person[key] = [round(float(v), 4) for v in triples.reshape(-1)]
        people.append(person)
    return {'version': 1.3, 'people': people}
