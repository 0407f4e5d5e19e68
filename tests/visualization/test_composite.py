"""The all-task composite pictures: one picture per image with the seven titled panels, and the contact sheet."""
import cv2
import numpy as np
import pytest
import sapiens2_matting  # noqa: F401  (each task registers its panel when its module is imported)

import sapiens2.apis.tasks  # noqa: F401
import sapiens2_albedo  # noqa: F401
import sapiens2_normal  # noqa: F401
import sapiens2_pointmap  # noqa: F401
from sapiens2.structures.layout import class_palette, keypoint_style
from sapiens2.visualization.composite import (
    MISSING_GRAY,
    PANELS,
    composite_picture,
    contact_sheet,
    foreground_mask,
    title_height,
    write_composites,
)
from sapiens2.visualization.dense_maps import albedo_to_bgr, depth_to_bgr, normals_to_bgr, overlay_labels
from sapiens2.visualization.keypoints import draw_keypoints

H, W = 48, 36


def tiny_results(rng: np.random.Generator) -> dict:
    """Results of every task on an (H, W) image, the person in the middle columns."""
    labels = np.zeros((H, W), np.uint8)
    labels[8:40, 12:24] = 2
    normal = np.zeros((H, W, 3), np.float32)
    normal[..., 2] = -1.0
    depth = np.where(labels > 0, 3.0 + rng.random((H, W)), 0.0).astype(np.float32)
    keypoints = np.full((1, 308, 2), [18.0, 24.0], np.float32)
    keypoints[0, :5] = [[18, 10], [16, 12], [20, 12], [14, 14], [22, 14]]
    scores = np.zeros((1, 308), np.float32)
    scores[0, :5] = 0.9
    return dict(
        pose=dict(keypoints=keypoints, keypoint_scores=scores, bboxes=np.array([[10, 6, 26, 42]], np.float32)),
        seg=dict(labels=labels),
        normal=dict(normal=normal),
        pointmap=dict(depth=depth, pointmap=np.stack([depth * 0, depth * 0, depth], -1)),
        albedo=dict(albedo=np.full((H, W, 3), 0.25, np.float32)),
        matting=dict(alpha=(labels > 0).astype(np.float32)))


def panel(picture: np.ndarray, index: int) -> np.ndarray:
    """The image area (below the title bar) of panel ``index``."""
    return picture[title_height(H):, index * W:(index + 1) * W]


def test_composite_has_the_seven_titled_panels_in_order():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (H, W, 3), dtype=np.uint8)
    results = tiny_results(rng)
    picture = composite_picture(image, results)
    assert [title for title, _ in PANELS] == ['image', 'pose skeleton', 'body parts', 'normals', 'depth', 'albedo',
                                              'alpha']
    assert picture.shape == (H + title_height(H), 7 * W, 3) and picture.dtype == np.uint8
    mask = results['seg']['labels'] > 0
    np.testing.assert_array_equal(panel(picture, 0), image)
    assert (panel(picture, 1) != image).any()  # the skeleton is drawn on the image
    np.testing.assert_array_equal(panel(picture, 2), overlay_labels(image, results['seg']['labels']))
    np.testing.assert_array_equal(panel(picture, 3), normals_to_bgr(results['normal']['normal'], mask))
    depth = panel(picture, 4)
    assert (depth[~mask] == 0).all() and (depth[mask].max(-1) > 0).all()
    np.testing.assert_array_equal(panel(picture, 5), albedo_to_bgr(results['albedo']['albedo'], mask))
    alpha = panel(picture, 6)
    assert (alpha[mask] == 255).all() and (alpha[~mask] == 0).all()
    assert (picture[:title_height(H)] > 0).any()  # titles are written in the bars


def test_a_task_without_a_result_gets_a_grey_panel_and_the_mask_falls_back_to_alpha():
    rng = np.random.default_rng(1)
    image = rng.integers(0, 255, (H, W, 3), dtype=np.uint8)
    results = tiny_results(rng)
    del results['seg'], results['pose']
    assert (foreground_mask(results) == (results['matting']['alpha'] > 0.5)).all()
    picture = composite_picture(image, results)
    for index in (1, 2):
        missing = panel(picture, index)
        assert (missing == MISSING_GRAY).mean() > 0.8 and (missing != MISSING_GRAY).any()  # grey, with its note
    assert foreground_mask({}) is None


def test_composite_rejects_a_non_image():
    with pytest.raises(ValueError, match='uint8 BGR'):
        composite_picture(np.zeros((H, W), np.uint8), {})


def test_write_composites_writes_one_picture_per_image_and_a_contact_sheet(tmp_path):
    rng = np.random.default_rng(2)
    frames = [(f'img{i}', rng.integers(0, 255, (H, W, 3), dtype=np.uint8), tiny_results(rng)) for i in range(3)]
    paths = write_composites(frames, str(tmp_path / 'out'))
    assert [p.split('/')[-1] for p in paths] == ['img0.png', 'img1.png', 'img2.png', 'contact_sheet.jpg']
    for (name, image, results), path in zip(frames, paths):
        np.testing.assert_array_equal(cv2.imread(path), composite_picture(image, results))
    sheet = cv2.imread(paths[-1])
    assert sheet.shape == (3 * (H + title_height(H)), 7 * W, 3)
    with pytest.raises(ValueError, match='unique'):
        write_composites(frames[:1] * 2, str(tmp_path / 'dup'))


def test_contact_sheet_resizes_rows_to_one_width():
    sheet = contact_sheet([np.zeros((10, 40, 3), np.uint8), np.zeros((20, 20, 3), np.uint8)], width=40)
    assert sheet.shape == (10 + 40, 40, 3)
    with pytest.raises(ValueError, match='at least one'):
        contact_sheet([])


def test_every_panel_is_the_tasks_drawing_pixel_for_pixel():
    """Each task's panel equals its drawing primitive called as the composite always called it (pose: 1 px per
    192 px of height, the layout's style; depth: the validity mask and the person mask; alpha: grey)."""
    rng = np.random.default_rng(3)
    image = rng.integers(0, 255, (H, W, 3), dtype=np.uint8)
    results = tiny_results(rng)
    results['pointmap']['valid'] = rng.random((H, W)) > 0.2
    results['matting']['alpha'] = rng.random((H, W)).astype(np.float32) * 1.4 - 0.2
    picture = composite_picture(image, results, kpt_thr=0.5)
    mask = results['seg']['labels'] > 0
    pose = results['pose']
    skeleton = draw_keypoints(image, pose['keypoints'], pose['keypoint_scores'], keypoint_style(None, 308),
                              kpt_thr=0.5, radius=1, thickness=1, bboxes=pose['bboxes'])
    alpha = np.round(np.clip(results['matting']['alpha'], 0, 1) * 255).astype(np.uint8)
    expected = [image, skeleton, overlay_labels(image, results['seg']['labels'], class_palette(None), opacity=0.5),
                normals_to_bgr(results['normal']['normal'], mask),
                depth_to_bgr(results['pointmap']['depth'], results['pointmap']['valid'] & mask),
                albedo_to_bgr(results['albedo']['albedo'], mask), np.repeat(alpha[..., None], 3, axis=2)]
    for index, want in enumerate(expected):
        np.testing.assert_array_equal(panel(picture, index), want, err_msg=PANELS[index][0])
