"""Keypoints308CocoDataset / CocoWholeBody308Dataset: parsing, filtering, clear errors, SynthHumans files load."""
import json

import cv2
import numpy as np
import pytest
from mmengine.registry import init_default_scope

from sapiens2.datasets.pose import (
    AnnotationError,
    CocoWholeBody308Dataset,
    Keypoints308CocoDataset,
    coco_wholebody_to_keypoints308,
)


def kpts308(seed: int, visible: int = 20) -> list:
    rng = np.random.default_rng(seed)
    k = np.zeros((308, 3))
    k[:visible, :2] = rng.uniform(10, 50, (visible, 2))
    k[:visible, 2] = 2
    return k.reshape(-1).tolist()


def write_coco(tmp_path, anns, images=None, name='ann.json'):
    images = images or [dict(id=1, file_name='img1.png', width=64, height=64)]
    for img in images:
        cv2.imwrite(str(tmp_path / img['file_name']), np.full((img['height'], img['width'], 3), 128, np.uint8))
    path = tmp_path / name
    path.write_text(json.dumps(dict(images=images, annotations=anns, categories=[dict(id=1, name='person')])))
    return str(path)


def ann(i, **kw):
    base = dict(id=i, image_id=1, category_id=1, bbox=[5, 5, 50, 50], iscrowd=0, keypoints=kpts308(i))
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


def build(cls, ann_file, tmp_path, **kw):
    return cls(ann_file=ann_file, data_root=str(tmp_path), data_prefix=dict(img=str(tmp_path) + '/'), **kw)


def test_parses_both_keypoint_fields_and_filters(tmp_path):
    k = kpts308(7)
    anns = [
        ann(1, area=900.0),
        ann(2, keypoints=None, goliath_wholebody_kpts=k),  # official eval-file field; area from the bbox
        ann(3, iscrowd=1),  # skipped
        ann(4, keypoints=[0.0] * 924),  # no visible keypoints: skipped
        ann(5, bbox=[5, 5, 0, 10]),  # empty box: skipped
    ]
    ds = build(Keypoints308CocoDataset, write_coco(tmp_path, anns), tmp_path)
    assert [ds.get_data_info(i)['id'] for i in range(len(ds))] == [1, 2]
    d1, d2 = ds.get_data_info(0), ds.get_data_info(1)
    assert d1['keypoints'].shape == (1, 308, 2) and d1['keypoints_visible'].shape == (1, 308)
    assert d1['area'] == pytest.approx(900.0) and d2['area'] == pytest.approx(50 * 50 * 0.53)
    np.testing.assert_allclose(d2['keypoints'][0], np.array(k).reshape(308, 3)[:, :2])
    assert d2['num_keypoints'] == 20
    assert d2['keypoints_visible'][0, :20].all() and not d2['keypoints_visible'][0, 20:].any()
    np.testing.assert_allclose(d1['bbox'], [[5, 5, 55, 55]])
    assert 'goliath_wholebody_kpts' not in d2['raw_ann_info'] and len(d2['raw_ann_info']['keypoints']) == 924
    assert d2['flip_indices'][1] == 2 and ds.metainfo['num_keypoints'] == 308


@pytest.mark.parametrize('bad, match', [
    (dict(keypoints=[1.0] * 30), '308 keypoints x 3'),
    (dict(keypoints=None), 'none of the keypoint fields'),
    (dict(bbox=[1, 2, 3]), 'bbox'),
    (dict(bbox=[1, 2, -3, 4]), 'bbox'),
    (dict(image_id=99), 'missing from "images"'),
])
def test_malformed_annotations_raise_clear_errors(tmp_path, bad, match):
    path = write_coco(tmp_path, [ann(1, **bad)])
    with pytest.raises(AnnotationError, match=match) as err:
        build(Keypoints308CocoDataset, path, tmp_path)
    assert 'ann.json' in str(err.value)


def test_image_without_size_raises(tmp_path):
    path = write_coco(tmp_path, [ann(1)])
    data = json.loads(open(path).read())
    del data['images'][0]['width']
    open(path, 'w').write(json.dumps(data))
    with pytest.raises(AnnotationError, match='width'):
        build(Keypoints308CocoDataset, path, tmp_path)


def test_test_mode_withdraws_ann_file_from_message_hub(tmp_path):
    from mmengine.logging import MessageHub
    build(Keypoints308CocoDataset, write_coco(tmp_path, [ann(1)]), tmp_path, test_mode=True)
    assert MessageHub.get_current_instance().get_info('goliath_ann_file', 'unset') is None


def test_coco_wholebody_adapter_maps_shared_keypoints(tmp_path):
    rng = np.random.default_rng(0)
    wb = np.concatenate([rng.uniform(10, 50, (133, 2)), np.full((133, 1), 2.0)], axis=1)
    wb[1, 2] = 0  # left_eye unlabelled
    parts, start = {}, 0
    for field, num in CocoWholeBody308Dataset.PARTS:
        parts[field] = wb[start:start + num].reshape(-1).tolist()
        start += num
    ds = build(CocoWholeBody308Dataset, write_coco(tmp_path, [ann(1, **parts)]), tmp_path)
    info = ds.get_data_info(0)
    mapping = coco_wholebody_to_keypoints308()
    expected_vis = np.zeros(308)
    for src, dst in mapping.items():
        expected_vis[dst] = wb[src, 2] > 0
        if wb[src, 2] > 0:
            np.testing.assert_allclose(info['keypoints'][0, dst], wb[src, :2], rtol=1e-6)
    np.testing.assert_array_equal(info['keypoints_visible'][0], expected_vis)
    assert info['num_keypoints'] == 52 and 'foot_kpts' not in info['raw_ann_info']


def test_coco_wholebody_adapter_rejects_wrong_part_length(tmp_path):
    path = write_coco(tmp_path, [ann(1, keypoints=[1.0] * 51, foot_kpts=[1.0] * 9)])
    with pytest.raises(AnnotationError, match='foot_kpts'):
        build(CocoWholeBody308Dataset, path, tmp_path)


def test_synthhumans_pose_files_load(synthhumans_root):
    init_default_scope('mmpose')
    pipeline = [
        dict(type='LoadImage'),
        dict(type='GetBBoxCenterScale', padding=1.25),
        dict(type='Sapiens2TopdownAffine', input_size=(96, 128)),
        dict(type='GenerateTarget', encoder=dict(type='UDPHeatmap', input_size=(96, 128), heatmap_size=(24, 32),
                                                 sigma=0.75)),
        dict(type='PackPoseInputs'),
    ]
    ds = Keypoints308CocoDataset(ann_file='annotations/keypoints308_val.json', data_root=synthhumans_root,
                                 data_prefix=dict(img=''), pipeline=pipeline)
    assert len(ds) > 0
    sample = ds[0]
    assert sample['inputs'].shape == (3, 128, 96)
    assert sample['data_samples'].gt_fields.heatmaps.shape == (308, 32, 24)
    assert sample['data_samples'].gt_instance_labels.keypoint_weights.sum() >= 8


def test_coco_wholebody_adapter_uses_the_schema_check(tmp_path):
    path = write_coco(tmp_path, [ann(1, keypoints=None, foot_kpts=[1.0] * 18)])
    message = r"ann.json: annotation 1 has none of the keypoint fields \['keypoints'\]"
    with pytest.raises(AnnotationError, match=message):
        build(CocoWholeBody308Dataset, path, tmp_path)
    path = write_coco(tmp_path, [ann(1, keypoints=[1.0] * 51, bbox=[100, 5, 10, 10])])
    with pytest.raises(AnnotationError, match='annotation 1 has bbox .* outside the image 1'):
        build(CocoWholeBody308Dataset, path, tmp_path)
