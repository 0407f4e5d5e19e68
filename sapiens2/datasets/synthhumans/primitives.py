"""Analytic shape primitives (capsules and ellipsoids) of a SynthHumans scene."""
from dataclasses import dataclass, field
from typing import List, Tuple

import numpy as np

Color = Tuple[int, int, int]


@dataclass
class PrimitiveSet:
    """Capsules and ellipsoids with a part label, a BGR albedo, a person id and a raster group each.

    Primitives of one group are intersected together over the union of their image boxes (few numpy calls per
    group), so a group should hold primitives that lie close together in the image (a hand, a head).
    """
    caps_a: List[np.ndarray] = field(default_factory=list)
    caps_b: List[np.ndarray] = field(default_factory=list)
    caps_r: List[float] = field(default_factory=list)
    caps_meta: List[tuple] = field(default_factory=list)
    ell_c: List[np.ndarray] = field(default_factory=list)
    ell_rot: List[np.ndarray] = field(default_factory=list)
    ell_radii: List[np.ndarray] = field(default_factory=list)
    ell_meta: List[tuple] = field(default_factory=list)

    def add_capsule(self, a, b, radius: float, label: int, albedo: Color, group: str, person: int = 0) -> None:
        """Add a capsule: the points within ``radius`` of the segment ``a``-``b``."""
        self.caps_a.append(np.asarray(a, np.float64))
        self.caps_b.append(np.asarray(b, np.float64))
        self.caps_r.append(float(radius))
        self.caps_meta.append((label, tuple(albedo), group, person))

    def add_ellipsoid(self, center, rot, radii, label: int, albedo: Color, group: str, person: int = 0) -> None:
        """Add an ellipsoid ``center + rot @ diag(radii) @ unit_ball``."""
        self.ell_c.append(np.asarray(center, np.float64))
        self.ell_rot.append(np.asarray(rot, np.float64))
        self.ell_radii.append(np.asarray(radii, np.float64))
        self.ell_meta.append((label, tuple(albedo), group, person))

    def extend(self, other: 'PrimitiveSet', person: int) -> None:
        """Append every primitive of ``other``, assigning them to ``person``."""
        for a, b, r, meta in zip(other.caps_a, other.caps_b, other.caps_r, other.caps_meta):
            self.add_capsule(a, b, r, *meta[:3], person=person)
        for c, rot, radii, meta in zip(other.ell_c, other.ell_rot, other.ell_radii, other.ell_meta):
            self.add_ellipsoid(c, rot, radii, *meta[:3], person=person)

    def transformed(self, rot: np.ndarray, trans: np.ndarray) -> 'PrimitiveSet':
        """Return the set moved by the rigid transform ``x -> rot @ x + trans``."""
        out = PrimitiveSet()
        out.caps_a = [rot @ a + trans for a in self.caps_a]
        out.caps_b = [rot @ b + trans for b in self.caps_b]
        out.caps_r = list(self.caps_r)
        out.caps_meta = list(self.caps_meta)
        out.ell_c = [rot @ c + trans for c in self.ell_c]
        out.ell_rot = [rot @ r for r in self.ell_rot]
        out.ell_radii = list(self.ell_radii)
        out.ell_meta = list(self.ell_meta)
        return out

    @property
    def num_capsules(self) -> int:
        return len(self.caps_r)

    @property
    def num_ellipsoids(self) -> int:
        return len(self.ell_c)
