"""Per-person dense outputs (``--per-person``): each dense map cropped to a person's box, no data outside the
person's mask, equal to the full map inside it; the files' names; the bad combination in one line."""
import json

import cv2
import numpy as np
import pytest

import sapiens2_normal  # noqa: F401  (the normal and pointmap tasks register the panels the crops are drawn with)
import sapiens2_pointmap  # noqa: F401
from sapiens2.apis.cli import main
from sapiens2.apis.people import PeopleComposer
from sapiens2.apis.people.crops import NO_LABEL, crop_window
from sapiens2.visualization.dense_maps import normals_to_bgr
from tests.apis.people.test_people_composer import fake_task, pose17, seg3, standing_person


def two_people():
    """Two standing people side by side (the second one the first shifted right) in boxes larger than them, with
    normals."""
    results = standing_person(width=160)
    pose, labels = results['pose'], results['seg']['labels']
    labels[:, 80:] = labels[:, :80]
    results['pointmap']['pointmap'] = results['pointmap']['pointmap'].astype(np.float32)  # as the model gives it
    results['pointmap']['pointmap'][..., 2] = np.where(labels != 1, 2.5, 3.0)
    results['pointmap']['valid'][60:62, 30:50] = False  # invalid points of the first person: no data either
    pose.update(bboxes=np.array([[24, 4, 56, 117], [104, 4, 136, 117]], np.float32),
                bbox_scores=np.array([0.9, 0.8], np.float32),
                keypoints=np.concatenate([pose['keypoints'], pose['keypoints'] + [80, 0]]),
                keypoint_scores=np.ones((2, 17), np.float32))
    normal = np.random.default_rng(0).normal(size=(120, 160, 3)).astype(np.float32)
    results['normal'] = dict(normal=normal / np.linalg.norm(normal, axis=-1, keepdims=True))
    return results


def composer():
    return PeopleComposer([pose17(), seg3(), fake_task('pointmap'), fake_task('normal')], per_person=True)


def test_crops_hold_the_full_map_inside_the_mask_and_no_data_outside():
    image = np.random.default_rng(1).integers(0, 255, (120, 160, 3), np.uint8)
    results = two_people()
    people = composer().compose(image, results)
    assert len(people['per_person']) == 2
    for n, crops in enumerate(people['per_person']):
        y0, y1, x0, x1 = crops['window']
        assert (y0, y1, x0, x1) == crop_window(people['bboxes'][n], (120, 160)) == (4, 118, 24 + 80 * n, 57 + 80 * n)
        inside = people['masks'][n][y0:y1, x0:x1]
        assert (crops['mask'] == inside).all() and inside.any() and not inside.all()
        normal = crops['normal']
        assert np.array_equal(normal[inside], results['normal']['normal'][y0:y1, x0:x1][inside])
        assert np.isnan(normal[~inside]).all()
        seg = crops['seg']
        assert (seg[inside] == results['seg']['labels'][y0:y1, x0:x1][inside]).all()
        assert (seg[~inside] == NO_LABEL).all()
        points, valid = crops['pointmap'], results['pointmap']['valid'][y0:y1, x0:x1]
        assert np.array_equal(points[inside & valid], results['pointmap']['pointmap'][y0:y1, x0:x1][inside & valid])
        assert np.isnan(points[~(inside & valid)]).all() and (n == 1 or not valid.all())
    assert people['records'][0]['depth_range'] == [2.5, 2.5]  # the record's statistics stay as they were


def test_crop_files_are_named_by_image_and_person_and_drawn_as_the_full_maps(tmp_path):
    image = np.random.default_rng(1).integers(0, 255, (120, 160, 3), np.uint8)
    results = two_people()
    people_composer = composer()
    people = people_composer.compose(image, results)
    written = people_composer.save(image, people, str(tmp_path), 'photo')
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f'photo_person{n}_{task}.{suffix}' for n in (0, 1) for task in ('normal', 'pointmap', 'seg')
                           for suffix in ('npy', 'png')) + ['photo_skeleton3d.ply']
    assert len(written) == len(names)
    y0, y1, x0, x1 = people['per_person'][1]['window']
    mask = people['masks'][1][y0:y1, x0:x1]
    picture = cv2.imread(str(tmp_path / 'photo_person1_normal.png'), cv2.IMREAD_UNCHANGED)
    assert picture.shape == (y1 - y0, x1 - x0, 4) and (picture[..., 3] == mask * 255).all()  # transparent outside
    full = normals_to_bgr(results['normal']['normal'])[y0:y1, x0:x1]
    assert np.array_equal(picture[..., :3][mask], full[mask])  # the full normal picture's region
    saved = np.load(tmp_path / 'photo_person1_normal.npy')
    assert np.array_equal(saved, people['per_person'][1]['normal'], equal_nan=True)
    people['track_ids'] = np.array([7, 3])
    (tmp_path / 'v').mkdir()
    people_composer.save(image, people, str(tmp_path / 'v'), 'clip_000004')
    assert (tmp_path / 'v' / 'clip_000004_track3_seg.npy').is_file()  # tracked video frames: by track id


def test_per_person_without_a_dense_map_is_one_line(tmp_path, capsys):
    with pytest.raises(ValueError, match='--per-person crops the dense maps, but no dense task runs'):
        PeopleComposer([pose17()], per_person=True)
    rendered = np.full((64, 48, 3), 128, np.uint8)
    cv2.imwrite(str(tmp_path / 'a.png'), rendered)
    (tmp_path / 'boxes.json').write_text(json.dumps(dict(a=[[10, 5, 38, 60]])))
    assert main([str(tmp_path / 'a.png'), '--task', 'seg', '--size', 'tiny', '--bboxes', str(tmp_path / 'boxes.json'),
                 '--per-person', '--out', str(tmp_path / 'out'), '--quiet', '--device', 'cpu']) == 0
    crops = sorted(p.name for p in (tmp_path / 'out' / 'people').glob('a_person0_*'))
    assert crops == ['a_person0_seg.npy', 'a_person0_seg.png']  # --per-person implies --people
    assert np.load(tmp_path / 'out' / 'people' / 'a_person0_seg.npy').shape == (56, 29)
    assert 'people: results in' in capsys.readouterr().out
    assert main([str(tmp_path / 'a.png'), '--task', 'pose', '--size', 'tiny', '--per-person', '--out',
                 str(tmp_path / 'x'), '--quiet', '--device', 'cpu']) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and '--per-person crops the dense maps' in error[0] and '--task normal' in error[0]
