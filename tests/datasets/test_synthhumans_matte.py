"""The soft alpha matte of SynthHumans: anti-aliased edges, loose hair with fractional coverage, motion blur."""
from dataclasses import replace

import cv2
import numpy as np
import pytest

from sapiens2.datasets.synthhumans import mirror_scene, render_scene, scene_for
from sapiens2.datasets.synthhumans.matte import edge_band, motion_kernel, over
from sapiens2.datasets.synthhumans.metainfo import seg_ids

SIZE = (256, 192)


def _without(scene, hair=True, blur=True):
    persons = tuple(replace(p, hair_fuzz=None) for p in scene.persons) if hair else scene.persons
    return replace(scene, persons=persons, motion_blur=(0.0, 0.0) if blur else scene.motion_blur)


def _fractional(alpha):
    return (alpha > 0.02) & (alpha < 0.98)


@pytest.mark.parametrize('index', [0, 1, 2])
def test_alpha_is_the_mask_away_from_edges_and_fractional_on_them(index):
    r = render_scene(_without(scene_for(0, 'train', index, SIZE)))
    mask = r.mask > 0
    band = edge_band(mask)
    assert np.array_equal(r.alpha[~band], mask[~band].astype(np.float32))
    assert _fractional(r.alpha[band]).mean() > 0.3
    levels = np.unique(r.alpha[band])
    assert len(levels) > 8 and levels.min() >= 0 and levels.max() <= 1


def test_loose_hair_gives_fractional_alpha_outside_the_solid_hair():
    scenes = [scene_for(0, 'train', i, SIZE) for i in range(8)]
    scene = next(s for s in scenes if s.persons[0].hair_fuzz is not None and s.motion_blur[0] == 0)
    with_hair, without = render_scene(scene), render_scene(_without(scene))
    hair = with_hair.seg == seg_ids()['Hair']
    near_hair = cv2.dilate(hair.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    added = _fractional(with_hair.alpha) & ~_fractional(without.alpha) & near_hair & (with_hair.mask == 0)
    assert added.sum() > 20
    assert np.all(with_hair.alpha >= without.alpha - 1e-6)
    face = np.isin(with_hair.seg, [seg_ids()[n] for n in ('Face_Neck', 'Upper_Lip', 'Lower_Lip')])
    assert np.abs(with_hair.foreground[face] - without.foreground[face]).max() < 1e-6  # the face stays uncovered
    far = cv2.dilate((with_hair.mask > 0).astype(np.uint8), np.ones((15, 15), np.uint8)) == 0
    assert np.all(with_hair.alpha[far] == 0)


def test_image_is_the_premultiplied_foreground_over_the_background():
    for index in range(4):
        r = render_scene(scene_for(0, 'train', index, SIZE))
        composite = r.foreground + (1 - r.alpha[..., None]) * r.background
        error = r.image.astype(np.float64) - composite
        assert np.abs(error).mean() < 4.0 and np.abs(error.mean()) < 0.5  # zero-mean sensor noise only
        assert np.all(r.foreground <= r.alpha[..., None] * 255 + 1e-3)  # pre-multiplied


def test_motion_blur_spreads_the_matte_and_keeps_its_mass():
    scene = _without(scene_for(0, 'train', 1, SIZE))
    sharp, blurred = render_scene(scene), render_scene(replace(scene, motion_blur=(6.0, 0.4)))
    assert _fractional(blurred.alpha).sum() > 2 * _fractional(sharp.alpha).sum()
    assert blurred.alpha.sum() == pytest.approx(sharp.alpha.sum(), rel=0.02)
    assert np.array_equal(blurred.mask, sharp.mask)


def test_mirrored_blurred_scene_renders_the_flipped_matte():
    scene = replace(scene_for(0, 'train', 0, SIZE), motion_blur=(5.0, 0.7))
    assert scene.persons[0].hair_fuzz is not None
    r, m = render_scene(scene), render_scene(mirror_scene(scene))
    assert np.mean(np.abs(m.alpha - r.alpha[:, ::-1]) < 1e-5) > 0.999
    assert np.mean(np.all(m.image == r.image[:, ::-1], axis=-1)) > 0.999


@pytest.mark.parametrize('length, angle', [(5.0, 0.3), (7.5, 1.2), (3.0, 0.0)])
def test_motion_kernel_is_a_normalised_line_and_mirrors_exactly(length, angle):
    kernel = motion_kernel(length, angle)
    assert kernel.shape[0] == kernel.shape[1] and kernel.shape[0] % 2 == 1
    assert kernel.sum() == pytest.approx(1.0) and kernel.min() >= 0
    np.testing.assert_allclose(motion_kernel(length, np.pi - angle), kernel[:, ::-1], atol=1e-12)
    ys, xs = np.nonzero(kernel > 0.05 * kernel.max())
    c = kernel.shape[0] // 2
    direction = np.array([np.cos(angle), np.sin(angle)])
    off_line = np.abs((xs - c) * direction[1] - (ys - c) * direction[0])
    assert off_line.max() < 1.5


def test_over_composites_premultiplied_layers():
    alpha, premult = over(np.array([0.5]), np.array([[10.0, 20.0, 30.0]]), np.array([1.0]),
                          np.array([[100.0, 100.0, 100.0]]))
    np.testing.assert_allclose(alpha, [1.0])
    np.testing.assert_allclose(premult, [[60.0, 70.0, 80.0]])
