"""validate_keypoint_coco / read_annotation_json: every malformed COCO keypoint file gets an AnnotationError naming
the file and the record, before xtcocotools or mmpose see it; valid files pass."""
import copy
import json

import pytest

from sapiens2.datasets.pose.annotation_schema import AnnotationError, read_annotation_json, validate_keypoint_coco

COUNTS, REQUIRED = {'keypoints': 2, 'goliath_wholebody_kpts': 2}, ('keypoints', 'goliath_wholebody_kpts')
VALID = dict(images=[dict(id=1, file_name='a.png', width=40, height=30)],
             annotations=[dict(id=7, image_id=1, category_id=1, bbox=[1, 2, 10, 10], keypoints=[1, 2, 2, 3, 4, 0])],
             categories=[dict(id=1, name='person')])


def mutated(fn):
    doc = copy.deepcopy(VALID)
    fn(doc)
    return doc


def test_valid_documents_pass():
    validate_keypoint_coco(VALID, 'f.json', COUNTS, REQUIRED)
    partly_outside = mutated(lambda d: d['annotations'][0].update(bbox=[-5, 25, 20, 20], iscrowd=True, area=3.5))
    validate_keypoint_coco(partly_outside, 'f.json', COUNTS, REQUIRED)
    empty_box = mutated(lambda d: d['annotations'][0].update(bbox=[100, 100, 0, 0]))  # skipped later by the reader
    validate_keypoint_coco(empty_box, 'f.json', COUNTS, REQUIRED)
    no_categories = mutated(lambda d: d.pop('categories'))
    validate_keypoint_coco(no_categories, 'f.json', COUNTS, REQUIRED)


def _del(key):
    return lambda d: d['images'][0].pop(key)


@pytest.mark.parametrize('mutate, match', [
    (lambda d: d.pop('images'), '"images" is missing'),
    (lambda d: d.update(annotations={}), '"annotations" is dict'),
    (lambda d: d.update(categories=[None]), '"categories" is'),
    (lambda d: d['images'].append(5), r'images\[1\] is int'),
    (_del('file_name'), r"image 1 lacks \['file_name'\]; every image needs"),
    (lambda d: d['images'][0].update(id='1'), r"images\[0\] has id '1'; expected an integer"),
    (lambda d: d['images'][0].update(width=0), 'image 1 has width 0; expected a positive'),
    (lambda d: d['images'][0].update(file_name=''), 'image 1 has file_name'),
    (lambda d: d['images'].append(dict(VALID['images'][0])), 'image id 1 is used twice'),
    (lambda d: d['annotations'].append([]), r'annotations\[1\] is list'),
    (lambda d: d['annotations'][0].pop('id'), r'annotation annotations\[0\] has id'),
    (lambda d: d['annotations'][0].update(image_id=None), 'annotation 7 has image_id None'),
    (lambda d: d['annotations'][0].update(image_id=9), r'annotations \[7\] \(of 1\) refer to image ids missing'),
    (lambda d: d['annotations'][0].update(iscrowd='x'), "annotation 7 has iscrowd 'x'; expected 0 or 1"),
    (lambda d: d['annotations'][0].update(num_keypoints=-1), 'annotation 7 has num_keypoints -1'),
    (lambda d: d['annotations'][0].update(category_id=[1]), r'annotation 7 has category_id \[1\]'),
    (lambda d: d['annotations'][0].update(area=float('nan')), 'annotation 7 has area nan'),
    (lambda d: d['annotations'][0].pop('keypoints'), 'annotation 7 has none of the keypoint fields'),
    (lambda d: d['annotations'][0].update(keypoints=[1, 2, 2]), r'"keypoints" has 3 values; expected 2 keypoints'),
    (lambda d: d['annotations'][0].update(keypoints={}), r'"keypoints" is dict'),
    (lambda d: d['annotations'][0]['keypoints'].__setitem__(4, None), r'value 4 \(keypoint 1\) is None'),
    (lambda d: d['annotations'][0]['keypoints'].__setitem__(0, True), r'value 0 \(keypoint 0\) is True'),
    (lambda d: d['annotations'][0].update(goliath_wholebody_kpts=[0] * 5), '"goliath_wholebody_kpts" has 5 values'),
    (lambda d: d['annotations'][0].pop('bbox'), 'annotation 7 lacks "bbox"'),
    (lambda d: d['annotations'][0].update(bbox=[1, 2, 3, float('inf')]), 'annotation 7 has bbox'),
    (lambda d: d['annotations'][0].update(bbox=[40, 2, 5, 5]), r'annotation 7 has bbox .* outside the image 1 \(a.png'),
    (lambda d: d['annotations'][0].update(bbox=[-10, 2, 10, 5]), 'outside the image'),
    (lambda d: d['annotations'].append(dict(VALID['annotations'][0])), 'annotation id 7 is used twice'),
])
def test_malformed_documents_name_file_and_record(mutate, match):
    with pytest.raises(AnnotationError, match=f'^f.json: .*{match}'):
        validate_keypoint_coco(mutated(mutate), 'f.json', COUNTS, REQUIRED)


def test_top_level_must_be_an_object():
    with pytest.raises(AnnotationError, match='f.json: the top level is list'):
        validate_keypoint_coco([VALID], 'f.json', COUNTS, REQUIRED)


def test_read_annotation_json_names_the_file(tmp_path):
    path = tmp_path / 'ann.json'
    path.write_text(json.dumps(VALID))
    assert read_annotation_json(str(path)) == VALID
    path.write_text(json.dumps(VALID)[:-10])
    with pytest.raises(AnnotationError, match=r'ann.json: not valid JSON \(.* line 1, column \d+\); the file is '):
        read_annotation_json(str(path))
    path.write_bytes(b'\xff\xfe{}')
    with pytest.raises(AnnotationError, match='shown.json: not UTF-8'):
        read_annotation_json(str(path), name='shown.json')
