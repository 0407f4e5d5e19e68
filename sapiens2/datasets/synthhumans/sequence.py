"""Short SynthHumans clips: people walking and turning, or two people crossing, with per-frame ground truth.

A clip is deterministic in (kind, number of frames, size, seed, fps). Each person keeps its shape and looks over the
clip and walks with a periodic gait (legs and arms swing in opposition) along a straight path centred in the view, at
1.3 m/s (slower when a long clip would take it out of view), facing where it walks, with a turn towards the camera
mid-way; ``crossing`` puts two people on crossing paths 1 m apart in depth, so that the nearer one passes in front
of the other mid-clip. Ground truth per frame: the 308 keypoints (x, y, COCO visibility), a box
per person around all its keypoints (also while it is hidden behind the other: what a tracker should keep) and the
person identities (the index of the person, stable over the clip).
"""
import os.path as osp
from dataclasses import dataclass, replace
from typing import List, Tuple

import cv2
import numpy as np
from PIL import Image

from sapiens2.utils.atomic_save import AtomicOutput

from .appearance import sample_appearance, sample_hair_fuzz
from .body import PersonParams
from .mannequin import Pose, sample_pose, sample_shape
from .render import render_scene
from .scene import Camera, Light, Scene

KINDS = ('walk', 'crossing')
GAIT_PERIOD_S = 1.1  # seconds per stride (two steps)
WALK_SPEED = 1.3  # metres per second, unless the clip is too long for the view (then slower)
CAMERA_DEPTH = 3.5  # metres from the camera to the middle of the paths


@dataclass
class Clip:
    """A rendered clip: ``frames`` (T, H, W, 3) BGR uint8; ``keypoints`` (T, N, 308, 3) as (x, y, visibility);
    ``bboxes`` (T, N, 4) xyxy around each person's 308 keypoints, hidden ones included; ``track_ids`` (N,) the
    identities;
    ``fps`` the frame rate the motion was sampled at."""
    frames: np.ndarray
    keypoints: np.ndarray
    bboxes: np.ndarray
    track_ids: np.ndarray
    fps: float


def _walking_pose(base: Pose, phase: float, amplitude: float) -> Pose:
    """``base`` with the legs and arms of a walking stride at ``phase`` (radians)."""
    swing = amplitude * np.sin(phase)
    sides = {}
    for side, sign in (('left', 1.0), ('right', -1.0)):
        stride = sign * swing
        sides[side] = dict(getattr(base, side), hip_flex=stride, knee=0.1 + 0.9 * max(0.0, -np.sin(phase * sign)) *
                           amplitude, hip_abd=0.05, hip_twist=0.0, shoulder_flex=-0.8 * stride, shoulder_abd=0.15,
                           shoulder_twist=0.0, elbow=0.35 + 0.3 * max(0.0, -stride), ankle=0.0)
    central = dict(base.central, spine_flex=0.05, spine_lat=0.0, spine_twist=0.15 * swing)
    return Pose(central=central, left=sides['left'], right=sides['right'])


def _paths(kind: str, rng: np.random.Generator, half_view: float, duration: float) -> List[Tuple[float, float, float]]:
    """(x start, x end, depth) of each person's path in metres (+x is image left), centred in the view: walked at
    ``WALK_SPEED`` over ``duration`` seconds, slower when that would leave 55-70 % of the view (``half_view``: its
    half-width per metre of depth)."""
    direction = rng.choice((-1.0, 1.0))
    depths = [CAMERA_DEPTH] if kind == 'walk' else [CAMERA_DEPTH - 0.5, CAMERA_DEPTH + 0.5]
    paths = []
    for depth in depths:
        half_span = min(WALK_SPEED * duration, 2 * rng.uniform(0.55, 0.7) * half_view * depth) / 2
        paths.append((direction * half_span, -direction * half_span, depth))
        direction = -direction  # the second person walks the other way
    return paths


def clip_scenes(kind: str, num_frames: int, size: Tuple[int, int], seed: int = 0, fps: float = 10.0) -> List[Scene]:
    """The scenes of a clip of ``kind`` ('walk' or 'crossing'), ``num_frames`` frames of ``size = (H, W)`` at
    ``fps`` frames per second."""
    if kind not in KINDS:
        raise ValueError(f'unknown SynthHumans clip kind {kind!r}; expected one of {KINDS}')
    if num_frames < 2:
        raise ValueError(f'a clip needs at least 2 frames, got {num_frames}')
    rng = np.random.default_rng([seed, 7, KINDS.index(kind)])
    height, width = size
    focal = (height / 2.0) / np.tan(np.deg2rad(50.0) / 2.0)
    camera = Camera(size=size, focal=float(focal), height=1.1, pitch=float(np.arctan2(0.25, CAMERA_DEPTH)))
    light = Light(direction=(0.3, -0.5, -0.8), ambient=0.4, intensity=1.0)
    background_seed = int(rng.integers(2**31))
    people = []
    for x0, x1, depth in _paths(kind, rng, (width - 1) / 2 / focal, (num_frames - 1) / fps):
        look = sample_appearance(rng)
        fuzz = sample_hair_fuzz(rng) if look.hair_style != 'bald' else None
        people.append((PersonParams(shape=sample_shape(rng), pose=sample_pose(rng), look=look, hair_fuzz=fuzz),
                       x0, x1, depth, rng.uniform(0, 2 * np.pi)))
    scenes = []
    for t in range(num_frames):
        progress = t / (num_frames - 1)
        persons = []
        for person, x0, x1, depth, phase0 in people:
            heading = -np.pi / 2 if x1 < x0 else np.pi / 2  # facing the walking direction
            turn = 0.6 * np.sin(np.pi * progress)  # turns towards the camera mid-way
            yaw = heading + (turn if heading < 0 else -turn)
            pose = _walking_pose(person.pose, phase0 + 2 * np.pi * t / fps / GAIT_PERIOD_S, 0.45)
            persons.append(replace(person, pose=pose, x=float(x0 + (x1 - x0) * progress), z=float(depth),
                                   yaw=float(yaw)))
        scenes.append(Scene(camera=camera, light=light, persons=tuple(persons), background_seed=background_seed))
    return scenes


def render_clip(kind: str, num_frames: int = 12, size: Tuple[int, int] = (128, 96), seed: int = 0,
                fps: float = 10.0) -> Clip:
    """Render a clip (see :func:`clip_scenes`) with its per-frame ground truth."""
    renderings = [render_scene(scene) for scene in clip_scenes(kind, num_frames, size, seed, fps)]
    keypoints = np.stack([r.keypoints for r in renderings]).astype(np.float32)
    bboxes = np.concatenate([keypoints[..., :2].min(2), keypoints[..., :2].max(2)], axis=-1)
    return Clip(frames=np.stack([r.image for r in renderings]), keypoints=keypoints, bboxes=bboxes,
                track_ids=np.arange(len(keypoints[0])), fps=float(fps))


def write_clip(clip: Clip, path: str) -> str:
    """Write the frames as a video at the clip's frame rate: ``.gif`` (Pillow, 256 colours), ``.avi`` (lossless: FFV1,
    else PNG) or ``.mp4`` (mp4v); return ``path``."""
    ext = osp.splitext(path)[1].lower()
    if ext == '.gif':
        images = [Image.fromarray(np.ascontiguousarray(frame[..., ::-1])) for frame in clip.frames]
        with AtomicOutput(path) as out:
            images[0].save(out.tmp, save_all=True, append_images=images[1:], duration=int(round(1000 / clip.fps)),
                           loop=0)
        return path
    codecs = {'.avi': ('FFV1', 'png '), '.mp4': ('mp4v', )}.get(ext)
    if codecs is None:
        raise ValueError(f'cannot write a clip as {path}: use .gif, .avi or .mp4')
    height, width = clip.frames.shape[1:3]
    out = AtomicOutput(path)
    for codec in codecs:
        writer = cv2.VideoWriter(out.tmp, cv2.VideoWriter_fourcc(*codec), clip.fps, (width, height))
        if writer.isOpened():
            for frame in clip.frames:
                writer.write(frame)
            writer.release()
            out.commit()
            return path
    out.discard()
    raise OSError(f'cannot write {path}: OpenCV has none of the encoders {codecs}')
