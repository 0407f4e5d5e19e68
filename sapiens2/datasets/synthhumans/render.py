"""Render a scene to exactly aligned image, albedo, masks, part labels, normals, depth, camera and keypoints."""
from dataclasses import dataclass

import numpy as np

from .background import render_background, sensor_noise
from .body import build_person
from .keypoints import keypoint_visibility
from .primitives import PrimitiveSet
from .raster import rasterise
from .scene import Scene
from .shading import composite, shading


@dataclass
class Rendering:
    """One rendered sample. Images are BGR uint8; ``keypoints`` is (N, 308, 3) as (x, y, COCO visibility);
    ``bboxes`` (N, 4) are xywh of each person's visible mask (zeros when fully hidden), ``areas`` its pixel count."""
    image: np.ndarray
    albedo: np.ndarray
    mask: np.ndarray
    instance: np.ndarray
    seg: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    K: np.ndarray
    extrinsic: np.ndarray
    keypoints: np.ndarray
    bboxes: np.ndarray
    areas: np.ndarray


def _lookup_tables(prims: PrimitiveSet):
    meta = prims.caps_meta + prims.ell_meta
    labels = np.array([m[0] for m in meta], np.uint8)
    colors = np.array([m[1] for m in meta], np.uint8).reshape(-1, 3)
    persons = np.array([m[3] for m in meta], np.int64)
    return labels, colors, persons


def _boxes(instance: np.ndarray, n: int):
    bboxes, areas = np.zeros((n, 4)), np.zeros(n, np.int64)
    for i in range(n):
        ys, xs = np.nonzero(instance == i + 1)
        if len(xs):
            bboxes[i] = xs.min(), ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1
            areas[i] = len(xs)
    return bboxes, areas


def _draw(scene: Scene, models: list):
    """Rasterise and shade the people of ``scene``: (raster, fg, label/person lookups, primitive ids, albedo, image)."""
    cam = scene.camera
    world = PrimitiveSet()
    for i, model in enumerate(models):
        world.extend(model.prims, person=i)
    prims = world.transformed(cam.extrinsic[:3, :3], cam.extrinsic[:3, 3])
    ras = rasterise(prims, cam.K, cam.size)
    labels, colors, persons = _lookup_tables(prims)
    fg = ras.prim >= 0
    pid = np.where(fg, ras.prim, 0)
    albedo = np.where(fg[..., None], colors[pid], 0).astype(np.uint8)
    light = scene.light
    background = render_background(scene.background_seed, cam.size, scene.background_flip)
    noise = sensor_noise(scene.background_seed, cam.size, scene.background_flip)
    shade = shading(ras.normal, light.direction, light.ambient, light.intensity)
    image = composite(albedo, shade, fg, background, noise)
    return ras, fg, labels, persons, pid, albedo, image


def render_image(scene: Scene) -> np.ndarray:
    """Only the BGR image of ``scene``, pixel for pixel that of :func:`render_scene`, without the keypoints and the
    label maps (for unlabeled pretraining images)."""
    return _draw(scene, [build_person(p, with_keypoints=False) for p in scene.persons])[-1]


def render_scene(scene: Scene) -> Rendering:
    """Render ``scene`` (see :func:`sample_scene`) with z-buffer ray casting and Lambertian shading."""
    cam = scene.camera
    K, ext = cam.K, cam.extrinsic
    models = [build_person(p) for p in scene.persons]
    ras, fg, labels, persons, pid, albedo, image = _draw(scene, models)
    seg = np.where(fg, labels[pid], 0).astype(np.uint8)
    instance = np.where(fg, persons[pid] + 1, 0).astype(np.uint8)
    keypoints = np.zeros((len(models), 308, 3))
    for i, model in enumerate(models):
        p = model.keypoints @ ext[:3, :3].T + ext[:3, 3]
        uvz = np.stack([K[0, 0] * p[:, 0] / p[:, 2] + K[0, 2], K[1, 1] * p[:, 1] / p[:, 2] + K[1, 2], p[:, 2]], 1)
        keypoints[i, :, :2] = uvz[:, :2]
        keypoints[i, :, 2] = keypoint_visibility(uvz, model.tolerance, i + 1, instance, ras.depth)
    bboxes, areas = _boxes(instance, len(models))
    return Rendering(image=image, albedo=albedo, mask=(fg * 255).astype(np.uint8), instance=instance, seg=seg,
                     normal=ras.normal.astype(np.float32), depth=ras.depth.astype(np.float32), K=K, extrinsic=ext,
                     keypoints=keypoints, bboxes=bboxes, areas=areas)
