"""The head: its primitives and the parametric layout of the face keypoints, in the head-local frame.

Head-local frame: origin at the head ellipsoid centre, x = the person's left, y = up, z = the facing direction.
``(a, b, c)`` are the head semi-axes along x, y, z in fixed proportions, so the layout scales with ``a``. Face points
are given in face coordinates ``(u, v)`` = (x / a, y / b) and lifted onto the front surface of the head-and-jaw
shape. Only the right side and the centre line are laid out explicitly; every left-side point is the mirror image of
its partner under ``flip_indices``, which makes the layout mirror-consistent by construction. Numbered points along a
contour follow the image order of the annotation protocol (for a frontal face, numbers rise from image left to right).
"""
from functools import lru_cache
from typing import Dict, List, Tuple

import numpy as np

from .appearance import Appearance
from .metainfo import flip_indices, keypoint_names, seg_ids

_MIRROR = np.array([-1.0, 1.0, 1.0])
# Contour parameter t in [-1, 1] (image left -> right) of the numbered midpoints and of the centre point.
_CONTOUR_T = {'midpoint_3': -0.75, 'midpoint_1': -0.5, 'midpoint_4': -0.25, 'centerpoint': 0.0, 'midpoint_5': 0.25,
              'midpoint_2': 0.5, 'midpoint_6': 0.75}
# Clock positions of iris/pupil border points, as (du, dv) unit offsets (3 o'clock = image right = person's left).
_CLOCK = {'12': (0.0, 1.0), 'midpoint_1': (0.7071, 0.7071), '3': (1.0, 0.0), 'midpoint_2': (0.7071, -0.7071),
          '6': (0.0, -1.0), 'midpoint_3': (-0.7071, -0.7071), '9': (-1.0, 0.0), 'midpoint_4': (-0.7071, 0.7071)}
_EYE_UV = (-0.38, 0.06)  # right eye centre
# Right ear points in ear coordinates (ez: forward, ey: up), both in [-1, 1].
_EAR = {
    'top_end_of_inferior_crus': (0.3, 0.45), 'top_end_of_superior_crus': (0.0, 0.72),
    'start_of_antihelix': (-0.05, 0.5), 'end_of_antihelix': (-0.15, -0.45), 'midpoint_1_of_antihelix': (-0.25, 0.3),
    'midpoint_1_of_inferior_crus': (0.12, 0.42), 'midpoint_2_of_antihelix': (-0.35, 0.0),
    'midpoint_3_of_antihelix': (-0.3, -0.3), 'highest_point_of_antitragus': (0.1, -0.45),
    'bottom_point_of_tragus': (0.6, -0.28), 'protruding_point_of_tragus': (0.72, -0.12),
    'top_point_of_tragus': (0.62, 0.05), 'start_point_of_crus_of_helix': (0.45, 0.05),
    'deepest_point_of_concha': (0.2, -0.05), 'tip_of_ear_lobe': (0.05, -0.97),
    'midpoint_between_22_15': (-0.35, -0.75), 'bottom_connecting_point_of_ear_lobe': (0.4, -0.85),
    'top_connecting_point_of_helix': (0.6, 0.6),
}
_HELIX_DEG = (-20, 10, 40, 70, 100, 130, 155, 175)


HEAD_PROPORTIONS = (1.0, 1.39, 1.217)  # semi-axes (a, b, c) relative to a


class HeadModel:
    """Head primitives and face landmarks for a head of half-width ``a`` (metres)."""

    def __init__(self, a: float):
        b, c = a * HEAD_PROPORTIONS[1], a * HEAD_PROPORTIONS[2]
        self.a, self.b, self.c = a, b, c
        self.jaw_c = np.array([0.0, -0.42 * b, 0.18 * c])
        self.jaw_r = np.array([0.78 * a, 0.55 * b, 0.78 * c])
        self.ear_c = np.array([-0.95 * a, -0.05 * b, -0.1 * c])
        self.ear_r = np.array([0.10 * a, 0.27 * b, 0.21 * a])
        self.nose = (self.surface(0.0, 0.02, -0.05), self.surface(0.0, -0.26, 0.13), 0.09 * a)
        self.eye_r = np.array([0.16 * a, 0.09 * a, 0.05 * a])
        self.upper_lip = (self.surface(0.0, -0.5, -0.02), np.array([0.24 * a, 0.045 * b, 0.06 * a]))
        self.lower_lip = (self.surface(0.0, -0.58, -0.02), np.array([0.22 * a, 0.05 * b, 0.065 * a]))

    # -- surfaces ----------------------------------------------------------------------------------------------
    def surface(self, u: float, v: float, dz: float = 0.0) -> np.ndarray:
        """The front surface point of the head-and-jaw shape at face coordinates (u, v), pushed by ``dz * a``."""
        x, y = u * self.a, v * self.b
        z_head = self.c * np.sqrt(max(1.0 - u * u - v * v, 0.0))
        qx, qy = x / self.jaw_r[0], (y - self.jaw_c[1]) / self.jaw_r[1]
        z_jaw = self.jaw_c[2] + self.jaw_r[2] * np.sqrt(max(1.0 - qx * qx - qy * qy, 0.0))
        return np.array([x, y, max(z_head, z_jaw) + dz * self.a])

    @staticmethod
    def _on(center, radii, direction) -> np.ndarray:
        d = np.asarray(direction, np.float64)
        return center + radii * d / np.linalg.norm(d)

    def eye_center(self) -> np.ndarray:
        return self.surface(*_EYE_UV, -0.035)

    # -- landmarks (right side and centre) ---------------------------------------------------------------------
    def _eye_lines(self) -> Dict[str, np.ndarray]:
        out = {}
        u0, v0 = _EYE_UV
        lines = {'upper_lash_line': (0.0, 0.043), 'upper_eyelid_line': (0.0, 0.054), 'upper_crease_line': (0.03, 0.06),
                 'lower_lash_line': (0.0, -0.032), 'lower_eyelid_line': (0.0, -0.043)}
        for line, (offset, amp) in lines.items():
            def point(t, offset=offset, amp=amp):
                return self.surface(u0 + 0.16 * t, v0 + offset + amp * np.sqrt(1.0 - t * t), 0.005)
            out[f'r_outer_end_of_{line}'] = point(-1.0)
            out[f'r_inner_end_of_{line}'] = point(1.0)
            for name, t in _CONTOUR_T.items():
                out[f'r_{name}_of_{line}'] = point(t)
        return out

    def _iris(self) -> Dict[str, np.ndarray]:
        out = {}
        center = self.eye_center()
        for part, radius in (('iris', 0.075 * self.a), ('pupil', 0.03 * self.a)):
            out[f'r_center_of_{part}'] = self._on(center, self.eye_r, (0.0, 0.0, 1.0))
            for clock, (du, dv) in _CLOCK.items():
                q = np.array([du * radius / self.eye_r[0], dv * radius / self.eye_r[1]])
                out[f'r_border_of_{part}_{clock}'] = self._on(center, self.eye_r, (q[0], q[1], np.sqrt(1 - q @ q)))
        return out

    def _brows(self) -> Dict[str, np.ndarray]:
        def point(s, lower):
            v = 0.25 + 0.045 * np.sin(np.pi * s) - (0.035 if lower else 0.0)
            return self.surface(-0.17 - 0.49 * s, v, 0.01)
        out = {'upper_startpoint_of_r_eyebrow': point(0.0, False), 'lower_startpoint_of_r_eyebrow': point(0.0, True),
               'end_of_r_eyebrow': self.surface(-0.66, 0.235, 0.01)}
        for k, s in (('1', 0.5), ('2', 0.75), ('3', 0.25)):
            out[f'upper_midpoint_{k}_of_r_eyebrow'] = point(s, False)
            out[f'lower_midpoint_{k}_of_r_eyebrow'] = point(s, True)
        return out

    def _nose(self) -> Dict[str, np.ndarray]:
        n0, n1, r = self.nose
        axis = (n1 - n0) / np.linalg.norm(n1 - n0)
        front = np.array([0.0, axis[2], -axis[1]])
        bridge = {'center_of_nose_root': 0.0, 'midpoint_1_of_nose_bridge': 0.25, 'midpoint_2_of_nose_bridge': 0.5,
                  'midpoint_3_of_nose_bridge': 0.75, 'tip_of_nose_bridge': 0.95}
        out = {name: n0 + s * (n1 - n0) + r * front for name, s in bridge.items()}
        out['tip_of_nose'] = n1 + r * (front + axis) / np.linalg.norm(front + axis)
        out['nose'] = out['tip_of_nose']
        out['bottom_center_of_nose'] = n1 + r * np.array([0.0, -0.9, -0.3])
        out['r_outer_corner_of_nose'] = self.surface(-0.17, -0.28, 0.02)
        out['inner_corner_of_r_nostril'] = n1 + r * np.array([-0.3, -0.9, -0.2])
        out['outer_corner_of_r_nostril'] = n1 + r * np.array([-1.2, -0.6, -0.5])
        out['upper_corner_of_r_nostril'] = n1 + r * np.array([-0.8, -0.3, -0.1])
        out['center_of_glabella'] = self.surface(0.0, 0.17)
        out['center_of_labiomental_groove'] = self.surface(0.0, -0.72)
        out['tip_of_chin'] = self.surface(0.0, -0.9)
        return out

    def _lips(self) -> Dict[str, np.ndarray]:
        (uc, ur), (lc, lr) = self.upper_lip, self.lower_lip
        # line -> (lip ellipsoid centre, radii, vertical direction, name of the t = 0 point)
        lines = {'upper_outer_lip': (uc, ur, 0.6, 'center_of_cupid_bow'),
                 'lower_outer_lip': (lc, lr, -0.6, 'center_of_lower_outer_lip'),
                 'upper_inner_lip': (uc, ur, -0.5, 'center_of_upper_inner_lip'),
                 'lower_inner_lip': (lc, lr, 0.5, 'center_of_lower_inner_lip')}
        out = {}
        for line, (center, radii, dy, center_name) in lines.items():
            outer = 'outer' in line
            for name, t in _CONTOUR_T.items():
                arc = dy * np.sqrt(1.0 - t * t) if outer else dy
                point = self._on(center, radii, ((0.95 if outer else 0.85) * t, arc, 0.8))
                out[center_name if name == 'centerpoint' else f'{name}_of_{line}'] = point
        out['r_outer_corner_of_mouth'] = self._on(uc, ur, (-1.0, -0.3, 0.15))
        out['r_inner_corner_of_mouth'] = self._on(uc, ur, (-0.8, -0.5, 0.45))
        return out

    def _ears(self) -> Dict[str, np.ndarray]:
        def point(ez, ey):
            return self._on(self.ear_c, self.ear_r, (-np.sqrt(max(1.0 - ez * ez - ey * ey, 0.15)), ey, ez))
        out = {f'r_{name}': point(*uv) for name, uv in _EAR.items()}
        for k, deg in enumerate(_HELIX_DEG, start=1):
            th = np.deg2rad(deg)
            out[f'r_point_{k}_of_inner_helix'] = point(-0.8 * np.sin(th), 0.8 * np.cos(th))
        out['right_ear'] = point(0.35, -0.1)
        return out

    def explicit_landmarks(self) -> Dict[str, np.ndarray]:
        """Right-side and centre-line face points (plus the body points nose, right_eye and right_ear)."""
        out = {}
        for part in (self._eye_lines(), self._iris(), self._brows(), self._nose(), self._lips(), self._ears()):
            out.update(part)
        out['right_eye'] = out['r_center_of_pupil']
        return out

    def landmarks(self) -> Dict[str, np.ndarray]:
        """Every face keypoint of the 308 layout (and nose/eyes/ears) in the head-local frame."""
        return {name: p * self.a for name, p in _unit_landmarks().items()}

    # -- primitives --------------------------------------------------------------------------------------------
    def primitives(self, look: Appearance) -> Tuple[List[tuple], List[tuple]]:
        """Head-local ``(capsules, ellipsoids)`` as (a, b, r, label, albedo) and (centre, radii, label, albedo)."""
        ids, a, b, c = seg_ids(), self.a, self.b, self.c
        face, skin = ids['Face_Neck'], look.skin
        ells = [(np.zeros(3), np.array([a, b, c]), face, skin), (self.jaw_c, self.jaw_r, face, skin),
                (self.ear_c, self.ear_r, face, skin), (self.ear_c * _MIRROR, self.ear_r, face, skin),
                (self.upper_lip[0], self.upper_lip[1], ids['Upper_Lip'], look.lip_color),
                (self.lower_lip[0], self.lower_lip[1], ids['Lower_Lip'], look.lip_color)]
        eye = self.eye_center()
        ells += [(eye, self.eye_r, face, look.eye_color), (eye * _MIRROR, self.eye_r, face, look.eye_color)]
        caps = [(self.nose[0], self.nose[1], self.nose[2], face, skin)]
        if look.hair_style != 'bald':
            ells.append((np.array([0.0, 0.12 * b, -0.1 * c]), np.array([1.07 * a, 0.95 * b, 1.05 * c]), ids['Hair'],
                         look.hair))
        if look.hair_style == 'long':
            ells.append((np.array([0.0, -0.45 * b, -0.55 * c]), np.array([0.95 * a, 0.8 * b, 0.45 * c]), ids['Hair'],
                         look.hair))
        if look.glasses:
            lens = eye + np.array([0.0, 0.0, 0.12 * a])
            radii = np.array([0.2 * a, 0.14 * a, 0.02 * a])
            ells += [(lens, radii, ids['Eyeglass'], look.glasses_color),
                     (lens * _MIRROR, radii, ids['Eyeglass'], look.glasses_color)]
            caps.append((lens + [0.18 * a, 0.0, 0.0], lens * _MIRROR - [0.18 * a, 0.0, 0.0], 0.025 * a,
                         ids['Eyeglass'], look.glasses_color))
        return caps, ells


@lru_cache(maxsize=None)
def _unit_landmarks() -> Dict[str, np.ndarray]:
    """The face layout of a head with ``a = 1``: explicit points plus the mirror images of their flip partners."""
    explicit = HeadModel(1.0).explicit_landmarks()
    names, flip = keypoint_names(), flip_indices()
    out = {}
    for i, name in enumerate(names):
        if name in explicit:
            out[name] = explicit[name]
        elif names[flip[i]] in explicit:
            out[name] = explicit[names[flip[i]]] * _MIRROR
    return out
