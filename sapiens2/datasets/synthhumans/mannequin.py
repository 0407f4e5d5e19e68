"""The articulated mannequin: body proportions, joint angles, their sampling and mirroring, and forward kinematics.

Body-local frame: x = the person's anatomical left, y = up, z = forward (right-handed). Side-specific angles are
stored anatomically (e.g. ``shoulder_abd`` > 0 lifts either arm away from the body), so mirroring a person swaps
the ``left`` and ``right`` angle sets and negates the central angles about the y and z axes.
"""
from dataclasses import dataclass, field, replace
from typing import Dict, Optional

import numpy as np

from .geometry import rx, ry, rz

SIDES = {'left': 1.0, 'right': -1.0}
FINGERS = ('forefinger', 'middle_finger', 'ring_finger', 'pinky_finger')
# MCP (y, z) on the palm and phalanx lengths, in hand lengths; z runs from the thumb side (+) to the pinky (-).
FINGER_MCP = {'forefinger': (-0.46, 0.15), 'middle_finger': (-0.47, 0.05), 'ring_finger': (-0.45, -0.05),
              'pinky_finger': (-0.41, -0.14)}
FINGER_LEN = {'forefinger': (0.22, 0.13, 0.09), 'middle_finger': (0.24, 0.15, 0.10), 'ring_finger': (0.22, 0.14, 0.09),
              'pinky_finger': (0.17, 0.10, 0.08), 'thumb': (0.24, 0.16, 0.12)}
FINGER_SPREAD = {'forefinger': -1.5, 'middle_finger': -0.5, 'ring_finger': 0.5, 'pinky_finger': 1.5}
MIRRORED_CENTRAL = ('spine_lat', 'spine_twist', 'neck_lat', 'head_yaw', 'head_roll')


@dataclass(frozen=True)
class BodyShape:
    """Stature (m) and dimensionless proportion factors."""
    height: float = 1.75
    girth: float = 1.0
    head: float = 1.0
    arm: float = 1.0
    leg: float = 1.0
    shoulder: float = 1.0


@dataclass(frozen=True)
class Pose:
    """Joint angles in radians: central ones and one dict per anatomical side."""
    central: Dict[str, float] = field(default_factory=dict)
    left: Dict[str, float] = field(default_factory=dict)
    right: Dict[str, float] = field(default_factory=dict)


def _beta(rng: np.random.Generator, lo: float, hi: float, a: float = 1.0, b: float = 1.0) -> float:
    return float(lo + (hi - lo) * rng.beta(a, b))


def sample_shape(rng: np.random.Generator) -> BodyShape:
    return BodyShape(height=float(rng.uniform(1.5, 1.95)), girth=float(rng.uniform(0.85, 1.25)),
                     head=float(rng.uniform(0.93, 1.08)), arm=float(rng.uniform(0.94, 1.06)),
                     leg=float(rng.uniform(0.94, 1.06)), shoulder=float(rng.uniform(0.92, 1.1)))


def _sample_side(rng: np.random.Generator, raised_leg: bool) -> Dict[str, float]:
    curl = rng.uniform(0.0, 1.4)
    side = {
        'shoulder_abd': _beta(rng, 0.12, 1.9, 1.2, 2.2), 'shoulder_flex': _beta(rng, -0.5, 1.9, 1.3, 2.0),
        'shoulder_twist': rng.uniform(-0.6, 0.6), 'elbow': _beta(rng, 0.0, 2.3, 1.2, 1.8),
        'forearm_twist': rng.uniform(-1.0, 1.0), 'wrist_flex': rng.uniform(-0.6, 0.7),
        'wrist_dev': rng.uniform(-0.25, 0.25), 'thumb_curl': rng.uniform(0.0, 0.8),
        'finger_spread': rng.uniform(0.0, 1.0), 'hip_abd': _beta(rng, -0.05, 0.45, 1.2, 2.5),
        'hip_twist': rng.uniform(-0.3, 0.4), 'ankle': rng.uniform(-0.35, 0.3), 'toe_out': rng.uniform(-0.1, 0.4),
        'hip_flex': rng.uniform(0.2, 1.5) if raised_leg else rng.uniform(-0.25, 0.35),
        'knee': rng.uniform(0.3, 2.0) if raised_leg else _beta(rng, 0.0, 0.5, 1.0, 2.5),
    }
    for finger in FINGERS:
        side[f'{finger}_curl'] = float(np.clip(curl + rng.normal(0.0, 0.25), 0.0, 1.6))
    return {k: float(v) for k, v in side.items()}


def sample_pose(rng: np.random.Generator) -> Pose:
    """Random joint angles within human limits (one leg raised in about a quarter of the poses)."""
    central = {
        'spine_flex': rng.uniform(-0.1, 0.35), 'spine_lat': float(np.clip(rng.normal(0, 0.08), -0.25, 0.25)),
        'spine_twist': rng.uniform(-0.35, 0.35), 'neck_flex': rng.uniform(-0.2, 0.3),
        'neck_lat': float(np.clip(rng.normal(0, 0.1), -0.3, 0.3)), 'head_pitch': rng.uniform(-0.35, 0.35),
        'head_yaw': rng.uniform(-0.7, 0.7), 'head_roll': float(np.clip(rng.normal(0, 0.12), -0.35, 0.35)),
    }
    raised = rng.random() < 0.25
    raised_side = 'left' if rng.random() < 0.5 else 'right'
    return Pose(central={k: float(v) for k, v in central.items()},
                left=_sample_side(rng, raised and raised_side == 'left'),
                right=_sample_side(rng, raised and raised_side == 'right'))


# Postures beyond standing, as the legs' and spine's angles (radians, ranges): sitting on an unseen seat, crouching
# (a squat or a catcher's stance) and bending forward with the knees flexed (a skier, a batter, someone lifting).
POSTURES = {
    'sitting': dict(hip_flex=(1.2, 1.7), knee=(1.2, 1.9), hip_abd=(0.0, 0.35), spine_flex=(-0.15, 0.3)),
    'crouching': dict(hip_flex=(1.7, 2.2), knee=(1.9, 2.5), hip_abd=(0.15, 0.6), spine_flex=(0.25, 0.7)),
    'bending': dict(hip_flex=(0.1, 0.6), knee=(0.2, 0.9), hip_abd=(0.0, 0.3), spine_flex=(0.5, 1.1)),
}


def with_posture(pose: Pose, rng: np.random.Generator, kind: Optional[str] = None) -> Pose:
    """``pose`` in the posture ``kind`` of :data:`POSTURES` (None: one drawn uniformly): new leg and spine angles, the
    arms and head kept. Each foot stays level with the ground (ankle = knee - hip flexion, within the joint's range)."""
    if kind is None:
        kind = sorted(POSTURES)[int(rng.integers(len(POSTURES)))]
    ranges = POSTURES[kind]
    central = dict(pose.central, spine_flex=float(rng.uniform(*ranges['spine_flex'])))
    sides = {}
    for side in SIDES:
        angles = dict(getattr(pose, side))
        for joint in ('hip_flex', 'knee', 'hip_abd'):
            angles[joint] = float(rng.uniform(*ranges[joint]))
        angles['ankle'] = float(np.clip(angles['knee'] - angles['hip_flex'] + rng.normal(0.0, 0.1), -0.6, 0.7))
        sides[side] = angles
    return Pose(central=central, left=sides['left'], right=sides['right'])


def mirror_pose(pose: Pose) -> Pose:
    """The pose of the person reflected through their sagittal plane."""
    central = {k: (-v if k in MIRRORED_CENTRAL else v) for k, v in pose.central.items()}
    return replace(pose, central=central, left=dict(pose.right), right=dict(pose.left))


@dataclass
class Skeleton:
    """Joint positions and segment frames (columns = segment axes) in the body-local frame, plus dimensions."""
    joints: Dict[str, np.ndarray]
    frames: Dict[str, np.ndarray]
    dims: Dict[str, float]


def _dims(shape: BodyShape) -> Dict[str, float]:
    h, g = shape.height, shape.girth
    return {
        'height': h, 'girth': g, 'spine': 0.29 * h, 'neck': 0.045 * h, 'shoulder_x': 0.10 * h * shape.shoulder,
        'shoulder_y': 0.265 * h, 'hip_x': 0.085 * h, 'upper_arm': 0.172 * h * shape.arm,
        'forearm': 0.155 * h * shape.arm, 'hand': 0.105 * h * shape.arm, 'thigh': 0.245 * h * shape.leg,
        'shank': 0.245 * h * shape.leg, 'r_upper_arm': 0.026 * h * g, 'r_forearm': 0.021 * h * g,
        'r_thigh': 0.04 * h * g, 'r_shank': 0.029 * h * g, 'r_neck': 0.03 * h * g,
        'head': 0.046 * h * shape.head,
    }


def _chain(joints, frames, prefix: str, start: np.ndarray, frame: np.ndarray, lengths, bends) -> None:
    """Walk a finger: each phalanx turns by its bend, then extends along its -y axis."""
    point = start
    for k, (length, bend) in enumerate(zip(lengths, bends)):
        frame = frame @ bend
        frames[f'{prefix}_{k}'] = frame
        point = point + frame @ np.array([0.0, -length, 0.0])
        joints[f'{prefix}_{k + 1}'] = point


def _hand(joints, frames, side: str, angles: Dict[str, float], d: Dict[str, float]) -> None:
    s, hand = SIDES[side], d['hand']
    g_hand = frames[f'{side}_hand']
    wrist = joints[f'{side}_wrist']
    for finger in FINGERS:
        y, z = FINGER_MCP[finger]
        mcp = wrist + g_hand @ (np.array([0.0, y, z]) * hand)
        joints[f'{side}_{finger}_0'] = mcp
        c = angles[f'{finger}_curl']
        base = g_hand @ rx(-0.1 * FINGER_SPREAD[finger] * angles['finger_spread'])
        bends = [rz(-s * c), rz(-s * 1.1 * c), rz(-s * 0.8 * c)]
        _chain(joints, frames, f'{side}_{finger}', mcp, base, np.array(FINGER_LEN[finger]) * hand, bends)
    cmc = wrist + g_hand @ (np.array([-s * 0.02, -0.10, 0.13]) * hand)
    joints[f'{side}_thumb_0'] = cmc
    c = angles['thumb_curl']
    base = g_hand @ rx(-0.75) @ rz(-s * 0.35)
    bends = [rz(-s * 0.3 * c), rz(-s * c), rz(-s * 0.8 * c)]
    _chain(joints, frames, f'{side}_thumb', cmc, base, np.array(FINGER_LEN['thumb']) * hand, bends)


def _arm(joints, frames, side: str, a: Dict[str, float], d: Dict[str, float]) -> None:
    s = SIDES[side]
    chest = frames['chest']
    shoulder = chest @ np.array([s * d['shoulder_x'], d['shoulder_y'], -0.01 * d['height']])
    g_upper = chest @ rz(s * a['shoulder_abd']) @ rx(-a['shoulder_flex']) @ ry(s * a['shoulder_twist'])
    elbow = shoulder + g_upper @ np.array([0.0, -d['upper_arm'], 0.0])
    g_fore = g_upper @ rx(-a['elbow']) @ ry(s * a['forearm_twist'])
    wrist = elbow + g_fore @ np.array([0.0, -d['forearm'], 0.0])
    g_hand = g_fore @ rz(-s * a['wrist_flex']) @ rx(a['wrist_dev'])
    joints.update({f'{side}_shoulder': shoulder, f'{side}_elbow': elbow, f'{side}_wrist': wrist})
    frames.update({f'{side}_upper_arm': g_upper, f'{side}_forearm': g_fore, f'{side}_hand': g_hand})
    _hand(joints, frames, side, a, d)


def _leg(joints, frames, side: str, a: Dict[str, float], d: Dict[str, float]) -> None:
    s = SIDES[side]
    pelvis = frames['pelvis']
    hip = pelvis @ np.array([s * d['hip_x'], 0.0, 0.0])
    g_thigh = pelvis @ rz(s * a['hip_abd']) @ rx(-a['hip_flex']) @ ry(s * a['hip_twist'])
    knee = hip + g_thigh @ np.array([0.0, -d['thigh'], 0.0])
    g_shank = g_thigh @ rx(a['knee'])
    ankle = knee + g_shank @ np.array([0.0, -d['shank'], 0.0])
    g_foot = g_shank @ rx(-a['ankle']) @ ry(s * a['toe_out'])
    joints.update({f'{side}_hip': hip, f'{side}_knee': knee, f'{side}_ankle': ankle})
    frames.update({f'{side}_thigh': g_thigh, f'{side}_shank': g_shank, f'{side}_foot': g_foot})


def skeleton(shape: BodyShape, pose: Pose) -> Skeleton:
    """Forward kinematics with the pelvis (mid-hip) at the origin of the body-local frame."""
    d = _dims(shape)
    c = pose.central
    pelvis = np.eye(3)
    chest = pelvis @ ry(c['spine_twist']) @ rx(c['spine_flex']) @ rz(c['spine_lat'])
    neck = chest @ rx(c['neck_flex']) @ rz(c['neck_lat'])
    head = neck @ ry(c['head_yaw']) @ rx(c['head_pitch']) @ rz(c['head_roll'])
    neck_base = chest @ np.array([0.0, d['spine'], 0.0])
    neck_top = neck_base + neck @ np.array([0.0, d['neck'], 0.005 * d['height']])
    head_center = neck_top + head @ np.array([0.0, 1.18 * d['head'], 0.12 * d['head']])
    joints = {'pelvis': np.zeros(3), 'neck_base': neck_base, 'neck_top': neck_top, 'head': head_center}
    frames = {'pelvis': pelvis, 'chest': chest, 'neck': neck, 'head': head}
    for side in SIDES:
        _arm(joints, frames, side, getattr(pose, side), d)
        _leg(joints, frames, side, getattr(pose, side), d)
    return Skeleton(joints=joints, frames=frames, dims=d)


def finger_radius(finger: str, hand: float) -> float:
    return {'thumb': 0.055, 'pinky_finger': 0.04}.get(finger, 0.045) * hand


def palm(sk: Skeleton, side: str):
    """(centre, rotation, radii) of the palm ellipsoid."""
    hand, rot = sk.dims['hand'], sk.frames[f'{side}_hand']
    center = sk.joints[f'{side}_wrist'] + rot @ np.array([0.0, -0.24 * hand, 0.0])
    return center, rot, np.array([0.075 * sk.dims['girth'], 0.25, 0.22]) * hand


def foot(sk: Skeleton, side: str):
    """(centre, rotation, radii) of the foot ellipsoid."""
    h, s, rot = sk.dims['height'], SIDES[side], sk.frames[f'{side}_foot']
    center = sk.joints[f'{side}_ankle'] + rot @ np.array([s * 0.004 * h, -0.022 * h, 0.045 * h])
    return center, rot, np.array([0.026 * sk.dims['girth'], 0.019, 0.083]) * h
