"""Placement of the 308 keypoints on the mannequin, and their visibility in a rendering.

Body joints sit at joint centres, hand points at finger joints (``third_joint`` = knuckle, ``2``/``3`` = the next
joints, ``4`` = the finger tip surface), feet points on the foot surface, face points on the head (see ``face.py``).
"""
from typing import Dict, Tuple

import numpy as np

from .face import HeadModel
from .mannequin import FINGERS, SIDES, Skeleton, finger_radius, foot
from .metainfo import keypoint_names

SURFACE_TOL = 0.02  # metres a surface keypoint may lie behind the visible surface and still count as visible


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _hand_points(sk: Skeleton, side: str, out: Dict[str, tuple]) -> None:
    j = sk.joints
    for finger in ('thumb', ) + FINGERS:
        r = finger_radius(finger, sk.dims['hand'])
        tol = r + SURFACE_TOL
        out[f'{side}_{finger}_third_joint'] = (j[f'{side}_{finger}_0'], tol)
        out[f'{side}_{finger}2'] = (j[f'{side}_{finger}_1'], tol)
        out[f'{side}_{finger}3'] = (j[f'{side}_{finger}_2'], tol)
        tip = j[f'{side}_{finger}_3']
        out[f'{side}_{finger}4'] = (tip + r * _unit(tip - j[f'{side}_{finger}_2']), SURFACE_TOL)


def _foot_points(sk: Skeleton, side: str, out: Dict[str, tuple]) -> None:
    s = SIDES[side]
    center, rot, radii = foot(sk, side)
    for name, direction in (('big_toe', (-s * 0.45, -0.1, 0.95)), ('small_toe', (s * 0.7, -0.15, 0.75)),
                            ('heel', (0.0, -0.35, -0.95))):
        d = np.array(direction)
        out[f'{side}_{name}'] = (center + rot @ (radii * d / np.linalg.norm(d)), SURFACE_TOL)


def _limb_points(sk: Skeleton, side: str, out: Dict[str, tuple]) -> None:
    j, d, s = sk.joints, sk.dims, SIDES[side]
    for joint, radius in (('shoulder', 'r_upper_arm'), ('elbow', 'r_upper_arm'), ('wrist', 'r_forearm'),
                          ('hip', 'r_thigh'), ('knee', 'r_thigh'), ('ankle', 'r_shank')):
        out[f'{side}_{joint}'] = (j[f'{side}_{joint}'], 1.25 * d[radius] + SURFACE_TOL)
    upper, r = sk.frames[f'{side}_upper_arm'], d['r_upper_arm']
    elbow = j[f'{side}_elbow']
    out[f'{side}_olecranon'] = (elbow + r * (upper @ _unit(np.array([0.0, -0.2, -1.0]))), SURFACE_TOL)
    out[f'{side}_cubital_fossa'] = (elbow + 0.9 * r * (upper @ _unit(np.array([0.0, 0.3, 1.0]))), SURFACE_TOL)
    acromion = j[f'{side}_shoulder'] + sk.frames['chest'] @ np.array([s * 0.3 * r, r, 0.0])
    out[f'{side}_acromion'] = (acromion, SURFACE_TOL)


def body_keypoints(sk: Skeleton, head: HeadModel) -> Tuple[np.ndarray, np.ndarray]:
    """The 308 keypoints (308, 3) in the body-local frame and their occlusion depth tolerances (308, )."""
    out: Dict[str, tuple] = {}
    for side in SIDES:
        _limb_points(sk, side, out)
        _hand_points(sk, side, out)
        _foot_points(sk, side, out)
    j = sk.joints
    out['neck'] = (0.5 * (j['neck_base'] + j['neck_top']), 1.25 * sk.dims['r_neck'] + SURFACE_TOL)
    rot, center = sk.frames['head'], j['head']
    for name, p in head.landmarks().items():
        out.setdefault(name, (center + rot @ p, SURFACE_TOL))
    names = keypoint_names()
    missing = [n for n in names if n not in out]
    if missing:
        raise KeyError(f'SynthHumans has no placement rule for keypoints {missing} of keypoints308.json')
    return np.array([out[n][0] for n in names]), np.array([out[n][1] for n in names])


def keypoint_visibility(uvz: np.ndarray, tolerance: np.ndarray, instance_id: int, instance: np.ndarray,
                        depth: np.ndarray) -> np.ndarray:
    """COCO visibility (2 visible, 1 occluded inside the image, 0 outside) of one person's projected keypoints.

    ``uvz`` holds pixel coordinates and camera z (K, 3). A keypoint inside the image is visible when a pixel of
    its 3x3 neighbourhood shows the same person at a depth no more than ``tolerance`` in front of the keypoint.
    """
    height, width = depth.shape
    u, v, z = uvz[:, 0], uvz[:, 1], uvz[:, 2]
    inside = (z > 0) & (u >= -0.5) & (u <= width - 0.5) & (v >= -0.5) & (v <= height - 0.5)
    vis = np.where(inside, 1, 0).astype(np.int64)
    ui = np.clip(np.round(np.where(inside, u, 0)).astype(np.int64), 0, width - 1)
    vi = np.clip(np.round(np.where(inside, v, 0)).astype(np.int64), 0, height - 1)
    seen = np.zeros_like(inside)
    for dv in (-1, 0, 1):
        for du in (-1, 0, 1):
            yy, xx = np.clip(vi + dv, 0, height - 1), np.clip(ui + du, 0, width - 1)
            seen |= (instance[yy, xx] == instance_id) & (z - depth[yy, xx] <= tolerance)
    vis[inside & seen] = 2
    return vis
