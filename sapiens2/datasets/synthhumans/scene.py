"""Scene parameters (camera, light, background, people), their random sampling and their mirror image."""
from dataclasses import dataclass, replace
from typing import Optional, Tuple

import numpy as np

from .appearance import sample_appearance, sample_hair_fuzz
from .body import PersonParams, mirror_person
from .geometry import rx, ry, rz
from .mannequin import sample_pose, sample_shape, with_posture
from .rich_lighting import FillLight, sample_rich_light

# 'plain': one colour per wall and floor, one white light (the original renderer); 'rich': textured, many-coloured
# rooms with distractor objects and coloured light varying over the image, so that no colour statistic tells scenes
# apart (docs/synthhumans.md, "Scene variety").
SCENE_VARIETIES = ('plain', 'rich')
_B = np.diag([-1.0, -1.0, 1.0])  # world (y up, camera looking along +z) -> OpenCV camera axes


@dataclass(frozen=True)
class Camera:
    """Pinhole camera at world (0, height, 0) with square pixels and the principal point at the image centre.

    ``pitch`` > 0 looks down; ``yaw`` and ``roll`` turn about the world up axis and the optical axis.
    """
    size: Tuple[int, int]
    focal: float
    height: float
    pitch: float = 0.0
    yaw: float = 0.0
    roll: float = 0.0

    @property
    def K(self) -> np.ndarray:
        h, w = self.size
        return np.array([[self.focal, 0.0, (w - 1) / 2.0], [0.0, self.focal, (h - 1) / 2.0], [0.0, 0.0, 1.0]])

    @property
    def extrinsic(self) -> np.ndarray:
        """World-to-camera 4x4 (OpenCV camera frame: x right, y down, z forward)."""
        rot = rz(self.roll) @ rx(self.pitch) @ _B @ ry(self.yaw)
        ext = np.eye(4)
        ext[:3, :3] = rot
        ext[:3, 3] = -rot @ np.array([0.0, self.height, 0.0])
        return ext


@dataclass(frozen=True)
class Light:
    """Directional light: unit direction towards the light in the camera frame, ambient and overall intensity;
    rich scenes add a BGR ``colour`` gain and a coloured ``fill`` light (:mod:`.rich_lighting`)."""
    direction: Tuple[float, float, float]
    ambient: float
    intensity: float
    colour: Optional[Tuple[float, float, float]] = None
    fill: Optional[FillLight] = None


@dataclass(frozen=True)
class Scene:
    camera: Camera
    light: Light
    persons: Tuple[PersonParams, ...]
    background_seed: int
    background_flip: bool = False
    motion_blur: Tuple[float, float] = (0.0, 0.0)  # (length in pixels, angle in [0, pi) from the image x axis)
    variety: str = 'plain'  # 'plain' or 'rich' (see SCENE_VARIETIES)
    patterned_clothes: bool = False  # prints and folds on the garments (.clothes)


def mirror_scene(scene: Scene) -> Scene:
    """The scene reflected through the world plane x = 0; it renders as the horizontally flipped image."""
    cam = replace(scene.camera, yaw=-scene.camera.yaw, roll=-scene.camera.roll)
    lx, ly, lz = scene.light.direction
    length, angle = scene.motion_blur
    light = replace(scene.light, direction=(-lx, ly, lz))
    if light.fill is not None:
        fx, fy, fz = light.fill.direction
        light = replace(light, fill=replace(light.fill, direction=(-fx, fy, fz)))
    return replace(scene, camera=cam, light=light,
                   persons=tuple(mirror_person(p) for p in scene.persons),
                   background_flip=not scene.background_flip, motion_blur=(length, (np.pi - angle) % np.pi))


def _sample_yaw(rng: np.random.Generator) -> float:
    """Facing direction: mostly towards the camera, sometimes in profile or from the back."""
    kind = rng.choice(3, p=(0.6, 0.25, 0.15))
    if kind == 0:
        return float(np.pi + rng.normal(0.0, 0.45))
    if kind == 1:
        return float(np.pi + rng.choice((-1.0, 1.0)) * np.pi / 2 + rng.normal(0.0, 0.3))
    return float(rng.normal(0.0, 0.4))


def _columns(rng: np.random.Generator, n: int) -> np.ndarray:
    """Horizontal image positions (fractions of the width) of n people; neighbours often overlap."""
    if n == 1:
        return np.array([rng.uniform(0.35, 0.65)])
    gaps = rng.uniform(0.15, 0.45, n - 1)
    cols = np.concatenate([[0.0], np.cumsum(gaps)])
    return cols - cols.mean() + 0.5 + rng.uniform(-0.08, 0.08)


def check_posture_ratio(posture_ratio: float) -> None:
    """One error line unless ``posture_ratio`` is a share (0..1); checked before anything is rendered or written."""
    if not 0.0 <= posture_ratio <= 1.0:
        raise ValueError(f'posture_ratio (--posture-ratio) is the share of people who sit, crouch or bend, between 0 '
                         f'and 1; got {posture_ratio}')


def sample_scene(rng: np.random.Generator, size: Tuple[int, int], variety: str = 'plain',
                 patterned_clothes: bool = False, posture_ratio: float = 0.0) -> Scene:
    """A random scene of 1-3 people for an image of ``size = (H, W)``; the first person fills 45-85 % of H.

    Loose hair (for people with hair) and a motion blur of the people (15 % of the scenes, 1-3 % of H long) are drawn
    last, so they leave every other draw unchanged; so are the light colours of a ``variety='rich'`` scene, whose
    people, camera and scene properties are those of the plain scene from the same ``rng`` (see SCENE_VARIETIES).
    ``patterned_clothes`` draws nothing from ``rng`` either: the prints follow from the scene's background seed.
    ``posture_ratio`` of the people sit, crouch or bend (:func:`.mannequin.with_posture`), drawn from the background
    seed too: everything else about the scene stays that of ``posture_ratio=0``.
    """
    if variety not in SCENE_VARIETIES:
        raise ValueError(f'scene variety must be one of {SCENE_VARIETIES}, got {variety!r}')
    check_posture_ratio(posture_ratio)
    height, width = size
    focal = (height / 2.0) / np.tan(np.deg2rad(rng.uniform(35.0, 55.0)) / 2.0)
    n = int(rng.choice(3, p=(0.45, 0.35, 0.2))) + 1
    shapes = [sample_shape(rng) for _ in range(n)]
    depth0 = focal * shapes[0].height / (rng.uniform(0.45, 0.85) * height)
    cam_h = rng.uniform(0.6, 1.6)
    pitch = float(np.arctan2(cam_h - 0.5 * shapes[0].height, depth0))
    cam = Camera(size=size, focal=float(focal), height=float(cam_h), pitch=pitch, yaw=float(rng.normal(0, 0.05)),
                 roll=float(rng.normal(0, 0.03)))
    cam_to_world = cam.extrinsic[:3, :3].T
    persons = []
    for shape, col in zip(shapes, _columns(rng, n)):
        z_cam = max(depth0 * rng.uniform(0.85, 1.35), focal * shape.height / (0.92 * height)) if persons else depth0
        ray = np.array([(col * (width - 1) - cam.K[0, 2]) / focal, 0.0, 1.0])
        x, _, z = cam_to_world @ (ray * z_cam)
        persons.append(PersonParams(shape=shape, pose=sample_pose(rng), look=sample_appearance(rng), x=float(x),
                                    z=float(z), yaw=_sample_yaw(rng)))
    direction = np.array([rng.uniform(-0.8, 0.8), rng.uniform(-1.0, -0.1), rng.uniform(-1.0, -0.3)])
    light = Light(direction=tuple(float(v) for v in direction / np.linalg.norm(direction)),
                  ambient=float(rng.uniform(0.25, 0.5)), intensity=float(rng.uniform(0.85, 1.15)))
    background_seed = int(rng.integers(2**31))
    persons = [replace(p, hair_fuzz=sample_hair_fuzz(rng) if p.look.hair_style != 'bald' else None) for p in persons]
    blur = (float(rng.uniform(0.01, 0.03) * height), float(rng.uniform(0.0, np.pi))) if rng.random() < 0.15 \
        else (0.0, 0.0)
    if variety == 'rich':
        light = sample_rich_light(rng, light)
    if posture_ratio > 0:
        posture_rng = np.random.default_rng([background_seed, 6])
        persons = [replace(p, pose=with_posture(p.pose, posture_rng)) if posture_rng.random() < posture_ratio else p
                   for p in persons]
    return Scene(camera=cam, light=light, persons=tuple(persons), background_seed=background_seed, motion_blur=blur,
                 variety=variety, patterned_clothes=patterned_clothes)
