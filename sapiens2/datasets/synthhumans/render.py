"""Render a scene to exactly aligned image, albedo, masks, part labels, normals, depth, camera, keypoints, and the
soft alpha matte with the pre-multiplied foreground and the background it was composited over."""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .background import render_background, sensor_noise
from .body import build_person
from .clothes import print_clothes
from .keypoints import keypoint_visibility
from .matte import antialiased_layer, hair_layer, motion_blur, over
from .metainfo import seg_ids
from .primitives import PrimitiveSet
from .raster import rasterise
from .rich_background import render_rich_background
from .rich_lighting import illumination_field
from .scene import Scene
from .shading import composite, light_shading

# Part labels of the face, which loose hair never covers.
FACE_LABELS = ('Face_Neck', 'Upper_Lip', 'Lower_Lip', 'Eyeglass')


@dataclass
class Rendering:
    """One rendered sample. Images are BGR uint8; ``keypoints`` is (N, 308, 3) as (x, y, COCO visibility);
    ``bboxes`` (N, 4) are xywh of each person's visible mask (zeros when fully hidden), ``areas`` its pixel count.

    ``alpha`` (H, W) float32 in [0, 1] is the soft matte of the people (anti-aliased edges, loose hair, motion blur)
    and ``foreground`` (H, W, 3) float32 their pre-multiplied BGR colour (0..255): ``image`` is
    ``foreground + (1 - alpha) * background`` plus sensor noise. ``mask`` stays the binary pixel-centre mask that
    every other map agrees with."""
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
    alpha: np.ndarray
    foreground: np.ndarray
    background: np.ndarray


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


def _hair_shells(prims: PrimitiveSet, scene: Scene, seg: np.ndarray, instance: np.ndarray) -> list:
    """(centre, rot, radii, albedo, fuzz, face mask) of every hair ellipsoid whose person has loose hair."""
    ids = seg_ids()
    face = np.isin(seg, [ids[name] for name in FACE_LABELS])
    shells = []
    for c, rot, radii, meta in zip(prims.ell_c, prims.ell_rot, prims.ell_radii, prims.ell_meta):
        person = meta[3]
        fuzz = scene.persons[person].hair_fuzz if person < len(scene.persons) else None
        if meta[0] == ids['Hair'] and fuzz is not None:
            shells.append((c, rot, np.asarray(radii), meta[1], fuzz, face & (instance == person + 1)))
    return shells


def _draw(scene: Scene, models: list, background: Optional[np.ndarray] = None) -> dict:
    """Rasterise, shade and composite the people of ``scene`` over its background (the rendered room, or
    ``background``): the raster and every map :func:`render_scene` derives from it (``ras``, ``fg``, ``seg``,
    ``instance``, ``albedo``, ``alpha``, ``premult``, ``background``, ``image``)."""
    cam = scene.camera
    K, ext = cam.K, cam.extrinsic
    world = PrimitiveSet()
    for i, model in enumerate(models):
        world.extend(model.prims, person=i)
    prims = world.transformed(ext[:3, :3], ext[:3, 3])
    ras = rasterise(prims, K, cam.size)
    labels, colors, persons = _lookup_tables(prims)
    fg = ras.prim >= 0
    pid = np.where(fg, ras.prim, 0)
    seg = np.where(fg, labels[pid], 0).astype(np.uint8)
    instance = np.where(fg, persons[pid] + 1, 0).astype(np.uint8)
    albedo = np.where(fg[..., None], colors[pid], 0).astype(np.uint8)
    light = scene.light
    rich = scene.variety == 'rich'
    if background is None:
        room = render_rich_background if rich else render_background
        background = room(scene.background_seed, cam.size, scene.background_flip)
    elif background.shape != tuple(cam.size) + (3, ) or background.dtype != np.uint8:
        raise ValueError(f'a background must be {tuple(cam.size)} BGR uint8, got {background.shape} {background.dtype}')
    noise = sensor_noise(scene.background_seed, cam.size, scene.background_flip)
    shade = light_shading(ras.normal, light)
    if scene.patterned_clothes:
        albedo, folds = print_clothes(scene.background_seed, cam.size, scene.background_flip, seg, instance, albedo)
        shade = shade * folds[..., None]
    alpha, premult = antialiased_layer(prims, K, cam.size, ras.prim, albedo * shade, colors, light)
    shells = _hair_shells(prims, scene, seg, instance)
    alpha, premult = over(*hair_layer(shells, K, cam.size, ras.depth, light), alpha, premult)
    alpha, premult = motion_blur(alpha, premult, *scene.motion_blur)
    if rich:  # light whose colour and strength vary over the image falls on the people and the room alike
        field = illumination_field(scene.background_seed, cam.size, scene.background_flip)
        premult = premult * field
        background = np.clip(np.round(background * field), 0, 255).astype(np.uint8)
    image = composite(premult, alpha, background, noise)
    return dict(ras=ras, fg=fg, seg=seg, instance=instance, albedo=albedo, alpha=alpha, premult=premult,
                background=background, image=image)


def render_image(scene: Scene, background: Optional[np.ndarray] = None) -> np.ndarray:
    """Only the BGR image of ``scene``, pixel for pixel that of :func:`render_scene`, without the keypoints and the
    label maps (for unlabeled pretraining images)."""
    return _draw(scene, [build_person(p, with_keypoints=False) for p in scene.persons], background)['image']


def render_scene(scene: Scene, background: Optional[np.ndarray] = None) -> Rendering:
    """Render ``scene`` (see :func:`sample_scene`) with z-buffer ray casting and Lambertian shading, over its room
    or over ``background`` (BGR uint8 of the image size, e.g. :func:`.photos.photo_background`): the people and
    every map but the image and the background are the same either way."""
    cam = scene.camera
    K, ext = cam.K, cam.extrinsic
    models = [build_person(p) for p in scene.persons]
    d = _draw(scene, models, background)
    ras, fg, instance, seg, alpha, premult = d['ras'], d['fg'], d['instance'], d['seg'], d['alpha'], d['premult']
    keypoints = np.zeros((len(models), 308, 3))
    for i, model in enumerate(models):
        p = model.keypoints @ ext[:3, :3].T + ext[:3, 3]
        uvz = np.stack([K[0, 0] * p[:, 0] / p[:, 2] + K[0, 2], K[1, 1] * p[:, 1] / p[:, 2] + K[1, 2], p[:, 2]], 1)
        keypoints[i, :, :2] = uvz[:, :2]
        keypoints[i, :, 2] = keypoint_visibility(uvz, model.tolerance, i + 1, instance, ras.depth)
    bboxes, areas = _boxes(instance, len(models))
    return Rendering(image=d['image'], albedo=d['albedo'], mask=(fg * 255).astype(np.uint8), instance=instance, seg=seg,
                     normal=ras.normal.astype(np.float32), depth=ras.depth.astype(np.float32), K=K, extrinsic=ext,
                     keypoints=keypoints, bboxes=bboxes, areas=areas, alpha=alpha.astype(np.float32),
                     foreground=premult.astype(np.float32), background=d['background'])
