"""benchmarks/real_photos.py: its PCK, COCO keypoint AP, leave-one-out constant, name mapping, LSPET reading and polygon
IoU on constructed cases."""
import json
import re

import numpy as np
import pytest

from sapiens2.metainfo import load_metainfo
from sapiens2.metainfo.seg29 import load_seg29
from tests.scripts import load_script


@pytest.fixture(scope='module')
def bench():
    return load_script('benchmarks/real_photos.py')


def _truth(n=3, k=12):
    rng = np.random.default_rng(0)
    truth = np.concatenate([rng.uniform(10, 90, (n, k, 2)), np.full((n, k, 1), 2.0)], axis=2)
    return truth, np.tile([0.0, 0.0, 100.0, 50.0], (n, 1))


def test_pck_of_a_perfect_and_of_a_shifted_prediction(bench):
    truth, boxes = _truth()
    assert bench.pck(truth[..., :2], truth, boxes, 0.1) == 1.0
    shifted = truth[..., :2].copy()
    shifted[:, :6, 0] += 15.0  # half the points 15 px off; the longer side is 100: within 0.2, not within 0.1
    assert bench.pck(shifted, truth, boxes, 0.1) == 0.5
    assert bench.pck(shifted, truth, boxes, 0.2) == 1.0
    truth[:, :6, 2] = 0  # unlabelled points are not scored, wherever they are predicted
    assert bench.pck(shifted, truth, boxes, 0.1) == 1.0


def test_drawn_right_counts_only_the_drawn_labelled_keypoints(bench):
    truth = np.array([[[10, 10, 2], [20, 20, 2], [30, 30, 0]]], float)  # the third keypoint is not labelled
    boxes = np.array([[0, 0, 100, 50]], float)  # longer side 100: within 0.2 means within 20 px
    pred = np.array([[[15, 10], [60, 20], [30, 30]]], float)  # right, 40 px off, (not labelled)
    assert bench.drawn_right(pred, truth, boxes, np.array([[True, True, True]]), 0.2) == 0.5
    assert bench.drawn_right(pred, truth, boxes, np.array([[True, False, True]]), 0.2) == 1.0
    assert bench.drawn_right(pred, truth, boxes, np.array([[False, True, False]]), 0.2) == 0.0
    assert np.isnan(bench.drawn_right(pred, truth, boxes, np.array([[False, False, True]]), 0.2))


def test_leave_one_out_constant_uses_only_the_other_people(bench):
    # Three people in boxes of different sizes; keypoint 0 at box-relative (0.2, 0.4), (0.4, 0.4), (0.9, 0.8).
    boxes = np.array([[0.0, 0.0, 10.0, 20.0], [100.0, 50.0, 20.0, 10.0], [0.0, 0.0, 40.0, 40.0]])
    relative = np.array([[0.2, 0.4], [0.4, 0.4], [0.9, 0.8]])
    truth = np.zeros((3, 2, 3))
    truth[:, 0, :2] = boxes[:, :2] + relative * boxes[:, 2:4]
    truth[:, 0, 2] = 2
    truth[2, 1] = [5.0, 5.0, 1]  # keypoint 1: labelled for person 2 only
    pred = bench.leave_one_out_constant(truth, boxes)
    # person 0 gets the median of persons 1 and 2: (0.65, 0.6) of its own box
    assert np.allclose(pred[0, 0], [6.5, 12.0])
    assert np.allclose(pred[1, 0], [100 + 0.55 * 20, 50 + 0.6 * 10])
    assert np.allclose(pred[2, 0], [0.3 * 40, 0.4 * 40])
    assert np.allclose(pred[0, 1], [5.0 / 40 * 10, 5.0 / 40 * 20])  # from person 2 alone
    assert np.allclose(pred[2, 1], [20.0, 20.0])  # nobody else has it: the box centre
    longer = bench.leave_one_out_constant(truth, boxes, scale='longer')  # positions / the longer side
    # persons 1 and 2 at (0.4, 0.2) and (0.9, 0.8) of their longer sides: (0.65, 0.5) of person 0's 20 px
    assert np.allclose(longer[0, 0], [13.0, 10.0])


def test_body_keypoints_are_found_by_name_in_any_layout(bench):
    names = ['nose'] + list(reversed(bench.BODY12_NAMES)) + ['left_eye']
    columns = bench.body12_indices(names)
    assert [names[i] for i in columns] == list(bench.BODY12_NAMES)
    with pytest.raises(ValueError, match='left_wrist'):
        bench.body12_indices([n for n in names if n != 'left_wrist'])


def test_polygon_iou_and_box_mask(bench):
    square = [[10.0, 10.0, 30.0, 10.0, 30.0, 30.0, 10.0, 30.0]]  # COCO's rasterisation: pixels 10..29 (20 x 20)
    mask = bench.polygon_mask(square, (40, 50))
    assert mask.sum() == 400 and mask[10, 10] and mask[29, 29] and not mask[30, 30] and not mask[9, 20]
    assert bench.polygon_mask(square + [[0.0, 0.0, 5.0, 0.0, 5.0, 5.0, 0.0, 5.0]], (40, 50)).sum() == 425  # union
    box = bench.box_mask(np.array([[10.0, 10.0, 20.0, 40.0]]), (40, 50))  # clipped to the image: 20 x 30
    assert box.sum() == 600
    assert bench.iou(mask, box) == pytest.approx(400 / 600)
    assert bench.iou(mask, mask) == 1.0 and bench.iou(mask, ~mask) == 0.0


def test_people_load_with_their_layout_checked(bench, tmp_path):
    person = dict(bbox=[1, 2, 3, 4], body12=[[0, 0, 0]] * 12, polygons=[[0, 0, 1, 0, 1, 1]])
    (tmp_path / 'gt_body12.json').write_text(json.dumps(dict(images={'a.jpg': [person, dict(person, polygons=None)]})))
    people = bench.load_people(str(tmp_path))
    assert [p.image for p in people] == ['a.jpg', 'a.jpg'] and people[1].polygons is None
    assert people[0].body12.shape == (12, 3) and list(people[0].bbox) == [1, 2, 3, 4]
    (tmp_path / 'gt_body12.json').write_text(json.dumps(dict(images={'a.jpg': [dict(person, body12=[[0, 0, 0]])]})))
    with pytest.raises(ValueError, match='has 1 body keypoints, expected 12'):
        bench.load_people(str(tmp_path))


def coco_people(bench, n=3):
    """``n`` people in two photos, all 17 keypoints labelled (the last person's left ear not), boxes 100 x 200."""
    rng = np.random.default_rng(1)
    people = []
    for i in range(n):
        box = np.array([50.0 * i, 10.0, 100.0, 200.0])
        points = np.concatenate([box[:2] + rng.uniform(0, 1, (17, 2)) * box[2:], np.full((17, 1), 2.0)], axis=1)
        people.append(bench.Person('a.jpg' if i < 2 else 'b.jpg', box, points[5:], None, points, 100.0 * 200.0))
    people[-1].keypoints17[3] = 0
    return people


def test_keypoint_ap_of_a_perfect_a_close_and_a_wrong_prediction(bench):
    people = coco_people(bench)
    truth = np.stack([p.keypoints17[:, :2] for p in people])
    scores = np.ones(truth.shape[:2])
    assert bench.keypoint_ap(truth, scores, people) == {'AP': 1.0, 'AP50': 1.0}
    # OKS 0.5 < OKS < 0.95 for every person: AP50 1, AP in between (the unlabelled point is not scored: far off)
    close = truth + np.where(np.arange(17)[:, None] < 5, 3.0, 8.0)
    close[2, 3] += 500
    ap = bench.keypoint_ap(close, scores, people)
    assert ap['AP50'] == 1.0 and 0.1 < ap['AP'] < 0.9
    assert bench.keypoint_ap(truth + 300, scores, people) == {'AP': 0.0, 'AP50': 0.0}  # every point far off


def test_lspet_people_are_read_from_the_converted_held_out_split(bench, tmp_path):
    with pytest.raises(FileNotFoundError, match='lspet_to_coco.py'):
        bench.load_lspet_people(str(tmp_path))
    names = load_metainfo('keypoints308.json')['keypoint_names']
    keypoints = np.zeros((308, 3))
    for k, name in enumerate(bench.BODY12_NAMES):
        keypoints[names.index(name)] = (k, 2 * k, 2 if k != 4 else 0)
    data = dict(images=[dict(id=9501, file_name='images/im09501.jpg', width=50, height=60)],
                annotations=[dict(id=9501, image_id=9501, bbox=[1, 2, 30, 40],
                                  keypoints=keypoints.reshape(-1).tolist())],
                categories=[dict(id=1, name='person', keypoints=names)])
    (tmp_path / 'annotations').mkdir()
    (tmp_path / 'annotations' / 'lspet_keypoints308_val.json').write_text(json.dumps(data))
    (person, ) = bench.load_lspet_people(str(tmp_path))
    assert person.image == 'im09501.jpg' and list(person.bbox) == [1, 2, 30, 40]
    assert person.body12[:, 0].tolist() == list(range(12)) and person.body12[4, 2] == 0 and person.body12[5, 2] == 2


def test_the_shipped_pose_model_runs_on_the_real_people(bench, capsys):
    bench.main(['--seg', 'none', '--matting', 'none'])
    out = capsys.readouterr().out
    assert '16 people in 6 photos' in out
    coco = re.search(r'^pose pose-tiny, 49 COCO people in 16 photos \(gt_coco17.json\): AP ([\d.]+), AP50 ([\d.]+), '
                     r'constant \(box\) AP ([\d.]+)', out, re.M)
    assert coco and all(0.0 <= float(v) <= 1.0 for v in coco.groups())
    assert re.search(r'^LSPET held-out: skipped', out, re.M)
    row = r'^pose pose-tiny: PCK@0\.1 [\d.]+, constant \(box\) PCK@0\.1 [\d.]+, .*PCK@0\.2 [\d.]+.*drawn@0\.3 ([\d.]+)'
    drawn = float(re.search(row, out, re.M).group(1))
    assert 0.0 <= drawn <= 1.0 and 0.0 <= float(re.search(r'drawn@0\.3 right@0\.2 ([\d.]+)', out).group(1)) <= 1.0
    first_set = out.split('  per joint: ')[1].splitlines()[0]  # the 16 people's joints
    per_joint = dict(re.findall(r'drawn@0\.3 (\w+) ([\d.]+)', first_set))
    assert list(per_joint) == ['shoulders', 'elbows', 'wrists', 'hips', 'knees', 'ankles']
    # the per-joint shares add up to the overall one, weighted by the labelled keypoints of each joint
    assert min(map(float, per_joint.values())) <= drawn + 0.005 and max(map(float, per_joint.values())) >= drawn - 0.005
    bench.main(['--seg', 'none', '--matting', 'none', '--kpt-thr', '0'])  # every keypoint scores at least 0
    assert re.search(r'drawn@0\.0 1\.000', capsys.readouterr().out)


def test_class_iou_sums_over_photos_and_skips_ignored_pixels(bench):
    truth_a = np.array([[0, 0, 1, 1], [0, 0, 1, 255]])
    pred_a = np.array([[0, 1, 1, 1], [0, 0, 1, 2]])  # one background pixel called 1; the ignored pixel called 2
    truth_b = np.array([[1, 1], [1, 1]])
    pred_b = np.array([[1, 1], [0, 0]])
    per_class = bench.class_iou([(pred_a, truth_a), (pred_b, truth_b)], num_classes=3)
    # class 0: intersection 3 (a) + 0 (b), union 4 (a) + 2 (b); class 1: 3 + 2 over 4 + 4; class 2: nowhere scored
    assert per_class[0] == pytest.approx(3 / 6) and per_class[1] == pytest.approx(5 / 8) and np.isnan(per_class[2])


def test_bounding_box_mask(bench):
    mask = np.zeros((6, 8), bool)
    mask[1, 2] = mask[4, 5] = True
    box = bench.bounding_box_mask(mask)
    assert box.sum() == 4 * 4 and box[1:5, 2:6].all()
    assert not bench.bounding_box_mask(np.zeros((3, 3), bool)).any()


class _LabelTask:
    """Stands in for a seg model: returns the label maps it is given, photo by photo (keyed by the mean value)."""

    def __init__(self, labels_by_value):
        self.labels_by_value = labels_by_value

    def predict(self, images):
        return [dict(labels=self.labels_by_value[int(images[0].mean())])]


def _ccp_folder(root, photos):
    import cv2
    for sub in ('rgb', 'seg', 'alpha'):
        (root / 'val' / sub).mkdir(parents=True, exist_ok=True)
    for name, (value, labels) in photos.items():
        cv2.imwrite(str(root / 'val' / 'rgb' / f'{name}.jpg'), np.full(labels.shape + (3, ), value, np.uint8))
        cv2.imwrite(str(root / 'val' / 'seg' / f'{name}.png'), labels.astype(np.uint8))
        cv2.imwrite(str(root / 'val' / 'alpha' / f'{name}.png'), np.where(labels > 0, 255, 0).astype(np.uint8))
    return root


def test_ccp_scores_person_and_class_iou(bench, tmp_path):
    truth = np.zeros((8, 6), np.uint8)
    truth[2:6, 2:4] = 4  # hair, 8 pixels
    truth[6:8, 2:4] = 255  # person, part unknown (ignored in the class IoU, foreground in the person mask)
    pred = np.zeros((8, 6), np.uint8)
    pred[2:8, 2:4] = 4
    pred[0, 0] = 7  # a background pixel called a body part
    root = _ccp_folder(tmp_path / 'ccp', {'0001': (50, truth)})
    task = _LabelTask({50: pred})
    scores = bench.ccp_scores(task, str(root), bench.FOREGROUND['seg'], load_seg29()['class_names'])
    assert scores['photos'] == 1
    assert scores['IoU'] == pytest.approx(12 / 13)  # person: 12 pixels, one false positive
    assert scores['box IoU'] == pytest.approx(1.0)
    assert scores['IoU Hair'] == pytest.approx(1.0)  # the ignored rows are not scored
    assert scores['IoU Background'] == pytest.approx(35 / 36)
    assert set(k for k in scores if k.startswith('IoU ')) == {'IoU Background', 'IoU Hair'}  # the classes CCP has
    matting = bench.ccp_scores(_AlphaTask(), str(root), bench.FOREGROUND['matting'])
    assert matting['IoU'] == pytest.approx(0.0) and not any(k.startswith('IoU ') for k in matting)


class _AlphaTask:
    def predict(self, images):
        return [dict(alpha=np.zeros(images[0].shape[:2], np.float32))]


def test_ccp_folder_problems_are_one_line(bench, tmp_path):
    with pytest.raises(SystemExit, match='no val/rgb, val/seg and val/alpha'):
        bench.ccp_samples(str(tmp_path))
    root = _ccp_folder(tmp_path / 'ccp', {'0001': (50, np.zeros((4, 4), np.uint8))})
    (root / 'val' / 'alpha' / '0001.png').unlink()
    with pytest.raises(SystemExit, match='1 of 1 photos in val/rgb lack'):
        bench.ccp_samples(str(root))
