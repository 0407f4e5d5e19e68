"""KeypointFormatCocoMetric: 308-keypoint predictions on tiny synthetic COCO-17 / COCO-WholeBody ground truths.

The ground truth is made from known 308-layout people with the same conversion, so perfect predictions score AP 1;
perturbing a part lowers that part (and the whole) and nothing else. Unmapped COCO-WholeBody face points carry
garbage in the ground truth: they must not count.
"""
import json

import numpy as np
import pytest
from mmpose.registry import METRICS

from sapiens2.datasets.pose import keypoints308_metainfo
from sapiens2.metainfo import load_metainfo
from sapiens2.structures.keypoint_formats import keypoint_format

NUM_IMAGES, PEOPLE_PER_IMAGE = 3, 2


def people(seed=0):
    """(ids, image ids, boxes xywh, 308 keypoints) of a few people, each filling its box."""
    rng = np.random.default_rng(seed)
    records = []
    for image in range(NUM_IMAGES):
        for person in range(PEOPLE_PER_IMAGE):
            x, y = 20 + 300 * person, 30.0
            box = [x, y, 180.0, 400.0]
            keypoints = np.stack([rng.uniform(x, x + 180, 308), rng.uniform(y, y + 400, 308)], axis=-1)
            records.append((len(records) + 1, image + 1, box, keypoints))
    return records


def write_gt(path, layout, records):
    fmt = keypoint_format(layout)
    annotations = []
    rng = np.random.default_rng(1)
    for ann_id, image_id, box, keypoints in records:
        converted, _ = fmt.convert(keypoints)
        triples = np.concatenate([converted, np.full((fmt.num_keypoints, 1), 2.0)], axis=1)
        triples[~fmt.mapped] = [*rng.uniform(0, 500, 2), 2.0]  # unmapped points: annotated, but never evaluated
        ann = dict(id=ann_id, image_id=image_id, category_id=1, bbox=box, area=box[2] * box[3] * 0.5, iscrowd=0)
        if layout == 'coco17':
            ann['keypoints'] = triples.reshape(-1).tolist()
        else:
            for field, part in (('keypoints', 'body'), ('foot_kpts', 'foot'), ('face_kpts', 'face'),
                                ('lefthand_kpts', 'left_hand'), ('righthand_kpts', 'right_hand')):
                start, stop = fmt.parts[part]
                ann[field] = triples[start:stop].reshape(-1).tolist()
        ann['num_keypoints'] = fmt.num_keypoints
        annotations.append(ann)
    images = [dict(id=i + 1, file_name=f'{i}.jpg', width=640, height=480) for i in range(NUM_IMAGES)]
    path.write_text(json.dumps(dict(images=images, annotations=annotations,
                                    categories=[dict(id=1, name='person')])))
    return str(path)


def samples(records, noise=None):
    out = []
    for ann_id, image_id, box, keypoints in records:
        keypoints = keypoints if noise is None else noise(keypoints)
        x, y, w, h = box
        out.append(dict(id=ann_id, img_id=image_id, category_id=1,
                        pred_instances=dict(keypoints=keypoints[None], keypoint_scores=np.ones((1, 308)),
                                            bboxes=np.array([[x, y, x + w, y + h]]), bbox_scores=np.ones(1)),
                        gt_instances=dict(bbox_scales=np.array([[w * 1.25, h * 1.25]]))))
    return out


def evaluate(ann_file, layout, predictions, **kwargs):
    metric = METRICS.build(dict(type='KeypointFormatCocoMetric', ann_file=ann_file, keypoint_format=layout,
                                **kwargs))
    metric.dataset_meta = dict(keypoints308_metainfo(), num_keypoints=308)
    metric.process([], predictions)
    return metric.evaluate(len(predictions))


def test_coco17_perfect_and_perturbed(tmp_path):
    records = people()
    gt = write_gt(tmp_path / 'coco.json', 'coco17', records)
    perfect = evaluate(gt, 'coco17', samples(records))
    assert perfect['coco/AP'] == pytest.approx(1.0) and perfect['coco/AR'] == pytest.approx(1.0)
    assert sorted(perfect) == sorted(f'coco/{name}' for name in ('AP', 'AP .5', 'AP .75', 'AP (M)', 'AP (L)', 'AR',
                                                                  'AR .5', 'AR .75', 'AR (M)', 'AR (L)'))

    rng = np.random.default_rng(2)
    noisy = evaluate(gt, 'coco17', samples(records, lambda k: k + rng.normal(0, 12, k.shape)))
    assert 0.0 <= noisy['coco/AP'] < 0.9


def test_wholebody_parts_and_unmapped_points(tmp_path):
    records = people()
    gt = write_gt(tmp_path / 'wholebody.json', 'coco_wholebody', records)
    perfect = evaluate(gt, 'coco_wholebody', samples(records))
    for part in ('', 'body/', 'foot/', 'face/', 'left_hand/', 'right_hand/'):
        assert perfect[f'coco/{part}AP'] == pytest.approx(1.0), part

    names = load_metainfo('keypoints308.json')['keypoint_names']
    face_sources = [names.index(s) for recipe in keypoint_format('coco_wholebody').recipes[23:91] for s, _ in recipe]
    rng = np.random.default_rng(3)

    def shake_face(keypoints):
        keypoints = keypoints.copy()
        keypoints[face_sources] += rng.normal(0, 10, (len(face_sources), 2))
        return keypoints

    shaken = evaluate(gt, 'coco_wholebody', samples(records, shake_face))
    assert shaken['coco/face/AP'] < 0.5 and shaken['coco/AP'] < 1.0
    for part in ('body/', 'foot/', 'left_hand/', 'right_hand/'):
        assert shaken[f'coco/{part}AP'] == pytest.approx(1.0), part


def test_only_the_mapped_points_are_evaluated(tmp_path):
    metric = METRICS.build(dict(type='KeypointFormatCocoMetric',
                                ann_file=write_gt(tmp_path / 'wb.json', 'coco_wholebody', people()),
                                keypoint_format='coco_wholebody'))
    assert metric.dataset_meta['num_keypoints'] == 101 == len(metric.sigmas)
    assert {part: len(p) for part, p in metric.part_positions.items()} == dict(
        body=17, foot=6, face=36, left_hand=21, right_hand=21)
    assert len(metric.coco.dataset['annotations'][0]['keypoints']) == 101 * 3


def test_clear_errors(tmp_path):
    gt = write_gt(tmp_path / 'coco.json', 'coco17', people())
    with pytest.raises(ValueError, match="evaluates on .*not 'body25'"):
        METRICS.build(dict(type='KeypointFormatCocoMetric', ann_file=gt, keypoint_format='body25'))
    metric = METRICS.build(dict(type='KeypointFormatCocoMetric', ann_file=gt))
    with pytest.raises(ValueError, match='but the dataset has 17 keypoints'):
        metric.dataset_meta = dict(num_keypoints=17)
    broken = json.loads((tmp_path / 'coco.json').read_text())
    broken['annotations'][1]['keypoints'] = broken['annotations'][1]['keypoints'][:-3]
    (tmp_path / 'broken.json').write_text(json.dumps(broken))
    with pytest.raises(ValueError, match='annotation 2 needs "keypoints" with 51 values'):
        METRICS.build(dict(type='KeypointFormatCocoMetric', ann_file=str(tmp_path / 'broken.json')))
    with pytest.raises(ValueError, match='expected keypoints of shape'):
        metric.process([], [dict(id=1, img_id=1, pred_instances=dict(keypoints=np.zeros((1, 17, 2)),
                                                                   keypoint_scores=np.zeros((1, 17))))])
