"""A posed, dressed mannequin in world coordinates: its primitives and its 308 keypoints.

World frame: y up, ground plane y = 0. A person stands at (x, 0, z) facing ``ry(yaw) @ (0, 0, 1)``.
"""
from dataclasses import dataclass, replace
from typing import Optional, Tuple

import numpy as np

from .appearance import Appearance, HairFuzz
from .face import HeadModel
from .geometry import ry
from .keypoints import body_keypoints
from .mannequin import FINGERS, SIDES, BodyShape, Pose, Skeleton, finger_radius, foot, mirror_pose, palm, skeleton
from .metainfo import seg_ids
from .primitives import PrimitiveSet


@dataclass(frozen=True)
class PersonParams:
    """Everything that defines one rendered person (``hair_fuzz``: loose hair around the solid hair, or none)."""
    shape: BodyShape
    pose: Pose
    look: Appearance
    x: float = 0.0
    z: float = 3.0
    yaw: float = np.pi
    hair_fuzz: Optional[HairFuzz] = None


def mirror_person(p: PersonParams) -> PersonParams:
    """The person reflected through the world plane x = 0 (anatomical left and right swap)."""
    return replace(p, pose=mirror_pose(p.pose), x=-p.x, yaw=-p.yaw)


@dataclass
class PersonModel:
    """World-space primitives, keypoints (308, 3) and per-keypoint occlusion depth tolerances (308, ) in metres
    (both with 0 rows when built without keypoints)."""
    prims: PrimitiveSet
    keypoints: np.ndarray
    tolerance: np.ndarray


def _torso(ps: PrimitiveSet, sk: Skeleton, look: Appearance) -> None:
    ids, d = seg_ids(), sk.dims
    h, g = d['height'], d['girth']
    chest = sk.frames['chest']
    top_color = look.skin if look.top == 'Torso' else look.top_color
    ps.add_ellipsoid([0.0, 0.03 * h, -0.005 * h], sk.frames['pelvis'], [0.10 * h * g, 0.08 * h, 0.066 * h * g],
                     ids['Lower_Clothing'], look.bottom_color, 'torso')
    ps.add_ellipsoid(chest @ [0.0, 0.12 * h, 0.0], chest, [0.088 * h * g, 0.115 * h, 0.06 * h * g], ids[look.top],
                     top_color, 'torso')
    ps.add_ellipsoid(chest @ [0.0, 0.215 * h, -0.005 * h], chest, [0.1 * h * g, 0.095 * h, 0.066 * h * g],
                     ids[look.top], top_color, 'torso')
    neck_low = sk.joints['neck_base'] - chest @ [0.0, 0.03 * h, 0.0]
    ps.add_capsule(neck_low, sk.joints['neck_top'], d['r_neck'], ids['Face_Neck'], look.skin, 'torso')


def _head(ps: PrimitiveSet, sk: Skeleton, head: HeadModel, look: Appearance) -> None:
    rot, center = sk.frames['head'], sk.joints['head']
    caps, ells = head.primitives(look)
    for a, b, r, label, color in caps:
        ps.add_capsule(center + rot @ a, center + rot @ b, r, label, color, 'head')
    for c, radii, label, color in ells:
        ps.add_ellipsoid(center + rot @ c, rot, radii, label, color, 'head')


def _shell(ps, a, b, r, fraction: float, label: int, color, group: str) -> None:
    """A garment shell around the first ``fraction`` of the limb segment a-b."""
    ps.add_capsule(a, a + fraction * (b - a), r, label, color, group)


def _skin_limb(ps: PrimitiveSet, sk: Skeleton, side: str, look: Appearance, limb: str,
               joints: Tuple[str, str, str], radii: Tuple[str, str]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two skin capsules of a limb along its ``{side}_<joint>`` joints, labelled ``<Side>_Upper_<Limb>`` and
    ``<Side>_Lower_<Limb>`` in the group ``{side}_{limb}``; returns the three joints."""
    ids, cap = seg_ids(), side.capitalize()
    top, middle, end = (sk.joints[f'{side}_{name}'] for name in joints)
    group = f'{side}_{limb}'
    ps.add_capsule(top, middle, sk.dims[radii[0]], ids[f'{cap}_Upper_{limb.capitalize()}'], look.skin, group)
    ps.add_capsule(middle, end, sk.dims[radii[1]], ids[f'{cap}_Lower_{limb.capitalize()}'], look.skin, group)
    return top, middle, end


def _arm(ps: PrimitiveSet, sk: Skeleton, side: str, look: Appearance) -> None:
    ids, d, group = seg_ids(), sk.dims, f'{side}_arm'
    sh, el, wr = _skin_limb(ps, sk, side, look, 'arm', ('shoulder', 'elbow', 'wrist'), ('r_upper_arm', 'r_forearm'))
    if look.sleeves != 'none':
        long = look.sleeves == 'long'
        _shell(ps, sh, el, 1.18 * d['r_upper_arm'], 1.0 if long else 0.45, ids[look.top], look.top_color, group)
        if long:
            _shell(ps, el, wr, 1.2 * d['r_forearm'], 0.9, ids[look.top], look.top_color, group)
    _hand(ps, sk, side, look)


def _hand(ps: PrimitiveSet, sk: Skeleton, side: str, look: Appearance) -> None:
    label, group = seg_ids()[f'{side.capitalize()}_Hand'], f'{side}_hand'
    center, rot, radii = palm(sk, side)
    ps.add_ellipsoid(center, rot, radii, label, look.skin, group)
    for finger in ('thumb', ) + FINGERS:
        r = finger_radius(finger, sk.dims['hand'])
        for k in range(3):
            ps.add_capsule(sk.joints[f'{side}_{finger}_{k}'], sk.joints[f'{side}_{finger}_{k + 1}'], r, label,
                           look.skin, group)


def _leg(ps: PrimitiveSet, sk: Skeleton, side: str, look: Appearance) -> None:
    ids, d, cap, group = seg_ids(), sk.dims, side.capitalize(), f'{side}_leg'
    hip, knee, ankle = _skin_limb(ps, sk, side, look, 'leg', ('hip', 'knee', 'ankle'), ('r_thigh', 'r_shank'))
    trousers = look.bottom == 'trousers'
    _shell(ps, hip, knee, 1.1 * d['r_thigh'], 1.0 if trousers else look.shorts_len, ids['Lower_Clothing'],
           look.bottom_color, group)
    if trousers:
        _shell(ps, knee, ankle, 1.15 * d['r_shank'], 0.92, ids['Lower_Clothing'], look.bottom_color, group)
    if look.shoes and look.socks > 0:
        _shell(ps, ankle, knee, 1.1 * d['r_shank'], look.socks, ids[f'{cap}_Sock'], look.sock_color, group)
    label = ids[f'{cap}_Shoe'] if look.shoes else ids[f'{cap}_Foot']
    ps.add_ellipsoid(*foot(sk, side), label, look.shoe_color if look.shoes else look.skin, group)


def _lowest_point(ps: PrimitiveSet) -> float:
    caps = [min(a[1], b[1]) - r for a, b, r in zip(ps.caps_a, ps.caps_b, ps.caps_r)]
    ells = [c[1] - np.sqrt(((rot[1] * radii)**2).sum()) for c, rot, radii in zip(ps.ell_c, ps.ell_rot, ps.ell_radii)]
    return float(min(caps + ells))


def build_person(p: PersonParams, with_keypoints: bool = True) -> PersonModel:
    """Pose, dress and place one person; feet (the lowest point) rest on the ground plane. ``with_keypoints=False``
    skips the 308 keypoints (for images only); the primitives are the same."""
    sk = skeleton(p.shape, p.pose)
    head = HeadModel(sk.dims['head'])
    ps = PrimitiveSet()
    _torso(ps, sk, p.look)
    _head(ps, sk, head, p.look)
    for side in SIDES:
        _arm(ps, sk, side, p.look)
        _leg(ps, sk, side, p.look)
    keypoints, tolerance = body_keypoints(sk, head) if with_keypoints else (np.zeros((0, 3)), np.zeros(0))
    rot = ry(p.yaw)
    trans = np.array([p.x, -_lowest_point(ps), p.z])
    return PersonModel(prims=ps.transformed(rot, trans), keypoints=keypoints @ rot.T + trans, tolerance=tolerance)
