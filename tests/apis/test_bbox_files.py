"""--bboxes files: ours, COCO annotation files and COCO detection results, matched to a run's inputs (a superset
of them is fine)."""
import json
import logging

import pytest

from sapiens2.apis.bbox_files import load_bboxes, match_bboxes
from sapiens2.apis.io.sources import Source

COCO_ANNOTATIONS = dict(
    images=[dict(id=785, file_name='000000000785.jpg'), dict(id=9, file_name='val/street.jpg'),
            dict(id=10, file_name='empty.jpg')],
    categories=[dict(id=3, name='car'), dict(id=7, name='person')],
    annotations=[dict(id=1, image_id=785, category_id=7, iscrowd=0, bbox=[10, 20, 30, 40]),
                 dict(id=2, image_id=785, category_id=7, iscrowd=1, bbox=[0, 0, 5, 5]),  # a crowd: left out
                 dict(id=3, image_id=785, category_id=3, iscrowd=0, bbox=[1, 1, 2, 2]),  # a car: left out
                 dict(id=4, image_id=9, category_id=7, iscrowd=0, bbox=[5, 6, 7, 8])])


@pytest.fixture
def logged():
    """The messages MMEngine's current logger prints (where the used-entries line goes)."""
    from mmengine.logging import MMLogger
    messages = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: messages.append(record.getMessage())
    MMLogger.get_current_instance().addHandler(handler)
    yield messages
    MMLogger.get_current_instance().removeHandler(handler)


def images(*names):
    return [Source('image', name, 'images', path=f'photos/{name}.jpg') for name in names]


def test_a_coco_annotation_file_gives_the_person_boxes_as_xyxy_per_file_name(tmp_path):
    path = tmp_path / 'instances_val.json'
    path.write_text(json.dumps(COCO_ANNOTATIONS))
    boxes = load_bboxes(str(path))
    assert boxes == {'000000000785.jpg': [[10, 20, 40, 60]], 'val/street.jpg': [[5, 6, 12, 14]], 'empty.jpg': []}
    matched = match_bboxes(boxes, images('000000000785', 'street', 'empty'), str(path))
    assert matched == {'000000000785': [[10, 20, 40, 60]], 'street': [[5, 6, 12, 14]], 'empty': []}


def test_coco_results_match_image_ids_to_numbered_file_stems_and_keep_the_confident_people(logged):
    results = [dict(image_id=785, bbox=[10, 20, 30, 40], score=0.9, category_id=1),
               dict(image_id=785, bbox=[0, 0, 4, 4], score=0.1, category_id=1),  # below the threshold
               dict(image_id=785, bbox=[1, 1, 2, 2], score=0.95, category_id=3),  # not a person
               dict(image_id=139, bbox=[1, 2, 3, 4], score=0.8, category_id=1),  # an image not in this run
               dict(image_id='street', bbox=[5, 5, 10, 10], score=0.7, category_id=1)]
    boxes = load_bboxes(results, score_thr=0.3)
    assert boxes[785] == [[10, 20, 40, 60, 0.9]] and boxes['street'] == [[5, 5, 15, 15, 0.7]]
    matched = match_bboxes(boxes, images('000000000785', 'street', 'other'), 'dets.json')
    assert matched == {'000000000785': [[10, 20, 40, 60, 0.9]], 'street': [[5, 5, 15, 15, 0.7]]}
    assert logged == ['dets.json: 2 of 3 entries used (the others name no input of this run, e.g. [139])']


def test_a_superset_of_our_own_format_is_used_for_the_inputs_of_the_run(logged):
    boxes = {'a': [[0, 0, 5, 5]], 'b.png': [[1, 1, 6, 6]], 'c': [[2, 2, 7, 7]], 'clip_000001': [[0, 0, 3, 3]],
             'gone': []}
    matched = match_bboxes(boxes, images('a', 'b', 'sub/c'))
    assert matched == {'a': [[0, 0, 5, 5]], 'b': [[1, 1, 6, 6]], 'sub/c': [[2, 2, 7, 7]]}
    assert logged == ["bboxes: 3 of 5 entries used (the others name no input of this run, e.g. ['clip_000001', "
                      "'gone'])"]
    match_bboxes(matched, images('a', 'b', 'sub/c'))
    assert len(logged) == 1  # every entry used: nothing to say


def test_entries_that_name_no_input_or_one_input_twice_are_one_line():
    with pytest.raises(ValueError, match=r"^b.json: none of its 1 entries names an input of this run \(\['x'\]"):
        match_bboxes({'x': [[0, 0, 1, 1]]}, images('a'), 'b.json')
    with pytest.raises(ValueError, match=r"^b.json: entries 'a' and 'a.jpg' both name input a; keep one$"):
        match_bboxes({'a': [], 'a.jpg': []}, images('a'), 'b.json')
    with pytest.raises(ValueError, match=r"entry 'x.jpg' could name one/x or two/x; key it by the output name"):
        match_bboxes({'x.jpg': []}, images('one/x', 'two/x'), 'b.json')


@pytest.mark.parametrize('content,message', [
    ('{"a": [[0, 0', r'^--bboxes {path} is not valid JSON'),
    ('"boxes"', r'^{path}: person boxes are a JSON object .* got str$'),
    ('{"annotations": []}', r'^{path}: a COCO annotation file needs the lists "images"'),
    ('{"images": [{"id": 1}], "annotations": []}',
     r'^{path}: images\[0\] needs "id" and "file_name", got {{"id": 1}}$'),
    ('{"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [{"image_id": 2, "bbox": [0, 0, 1, 1]}]}',
     r'^{path}: annotations\[0\] has image_id 2, which no entry of "images" has$'),
    ('{"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [{"image_id": 1, "bbox": [0, 0, 1]}]}',
     r'^{path}: annotations\[0\] has bbox \[0, 0, 1\]; COCO boxes are 4 numbers \[x, y, width, height\]$'),
    ('[{"image_id": 1, "bbox": [0, 0, 1, 1], "score": 0.9}, {"bbox": [0, 0, 1, 1]}]',
     r'^{path}: entry 1 needs "image_id" and "bbox" \[x, y, w, h\] \(COCO detection results\)'),
    ('[{"image_id": 1, "bbox": [0, 0, "1", 1], "score": 0.9}]', r'^{path}: entry 0 has bbox \[0, 0, "1", 1\]'),
    ('[{"image_id": 1, "bbox": [0, 0, 1, 1], "score": "high"}]', r'^{path}: entry 0 has score \'high\'; give a number'),
    ('[{"image_id": [1], "bbox": [0, 0, 1, 1]}]', r'^{path}: entry 0 has image_id \[1\]; give an integer or a string'),
    # every reader checks a box the same way (sapiens2.structures.person_boxes): our format too
    ('{"a": [[true, 0, 1, 1]]}', r"^{path}: entry 'a' box 0 has bbox \[true, 0, 1, 1\]: true is a boolean, not a "
     r'number; person boxes are'),
    ('{"a": [[0, 0, 1e300, 1]]}', r"^{path}: entry 'a' box 0 has bbox \[0, 0, 1e\+300, 1\]: 1e\+300 lies beyond"),
    ('{"a": 5}', r"^{path}: entry 'a' is 5; give a list of person boxes"),
    ('{"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [{"id": 17, "image_id": 1, "bbox": [10, 10, -5, '
     '20]}]}', r'^{path}: annotations\[0\] \(id 17\) has bbox \[10, 10, -5, 20\]: a width of -5; COCO boxes are'),
    ('[{"image_id": 1, "bbox": [0, 0, 1, NaN]}]', r'^{path}: entry 0 has bbox \[0, 0, 1, NaN\]: a non-finite value'),
])
def test_a_malformed_file_is_one_line_naming_the_file_and_the_entry(tmp_path, content, message):
    path = tmp_path / 'boxes.json'
    path.write_text(content)
    with pytest.raises(ValueError, match=message.format(path=path)) as err:
        load_bboxes(str(path))
    assert len(str(err.value).splitlines()) == 1


def test_without_a_person_category_category_1_is_the_person():
    boxes = load_bboxes(dict(COCO_ANNOTATIONS, categories=None))  # the file's persons are category 7: nobody
    assert list(boxes.values()) == [[], [], []]
