"""The one check of person boxes (every box reader uses it): JSON numbers only, finite, within range, positive
size, overlapping the image, at most MAX_BOXES_PER_IMAGE per image, a repeated box taken once."""
import numpy as np
import pytest

from sapiens2.structures.person_boxes import (
    MAX_BOXES_PER_IMAGE,
    DuplicateBoxWarning,
    box_values,
    check_person_boxes,
    coco_box,
)


@pytest.mark.parametrize('box,said', [
    ([True, 0, 10, 10], r'true is a boolean, not a number'),
    ([0, '0', 10, 10], r'"0" is a string, not a number \(write it without quotes\)'),
    ([0, 0, 1e300, 1e300], r'1e\+300 lies beyond 1e\+06 pixels'),
    ([-3e38, 0, 10, 10], r'-3e\+38 lies beyond 1e\+06 pixels'),
    ([0, float('nan'), 10, 10], r'a non-finite value \(nan\)'),
    ([0, 0, None, 10], r'null is not a number'),
])
def test_a_box_value_that_is_no_coordinate_is_one_line_naming_where_and_the_box(box, said):
    with pytest.raises(ValueError, match=rf'^f\.json: entry 3 has bbox \[.*\]: {said}; person boxes are \[x1, y1, '
                       r'x2, y2\] or \[x1, y1, x2, y2, score\]$'):
        box_values(box, 'f.json: entry 3')


def test_a_coco_box_names_the_raw_numbers_of_a_non_positive_size():
    assert coco_box([10, 20, 5, 6], 'x') == [10, 20, 15, 26]
    with pytest.raises(ValueError, match=r'^ann 7 has bbox \[10, 10, -5, 20\]: a width of -5; COCO boxes are 4 '
                       r'numbers \[x, y, width, height\] with width and height > 0$'):
        coco_box([10, 10, -5, 20], 'ann 7')
    with pytest.raises(ValueError, match=r'has bbox \[1, 2, 3, 4, 5\]; COCO boxes are 4 numbers'):
        coco_box([1, 2, 3, 4, 5], 'ann 7')


def test_the_per_image_check_refuses_what_pose_refuses_and_keeps_scores():
    assert check_person_boxes([[1, 2, 30, 40, 0.5], [0, 0, 10, 10]], (64, 48)).tolist() == \
        [[1, 2, 30, 40, 0.5], [0, 0, 10, 10, 1]]
    assert check_person_boxes(np.array([[1, 2, 30, 40]], np.float32), (64, 48), 'a', 'xywh')[0, 2:4].tolist() == \
        [31, 42]
    for box, said in (([60, 70, 90, 99], 'lies outside the 48x64'), ([30, 10, 20, 40], 'is empty or inverted')):
        with pytest.raises(ValueError, match=rf'^a: person box 0 \[.*\] \(xyxy\) {said}'):
            check_person_boxes([box], (64, 48), 'a')
    with pytest.raises(ValueError, match=r'an array of bool'):
        check_person_boxes(np.ones((1, 4), bool), (64, 48), 'a')
    assert check_person_boxes([], (64, 48)).shape == (0, 5)


def test_a_repeated_box_is_taken_once_with_a_warning():
    with pytest.warns(DuplicateBoxWarning, match=r'^a: person box 2 \[0, 0, 10, 10, 0\.3\] repeats box 0; it is '
                      'taken once'):
        boxes = check_person_boxes([[0, 0, 10, 10], [5, 5, 20, 20], [0, 0, 10, 10, 0.3]], (64, 48), 'a')
    assert boxes[:, :4].tolist() == [[0, 0, 10, 10], [5, 5, 20, 20]]


def test_more_boxes_than_the_limit_for_one_image_are_refused_before_any_is_checked():
    boxes = [[0, 0, 10, 10]] * (MAX_BOXES_PER_IMAGE + 1)
    with pytest.raises(ValueError, match=rf'^a: {MAX_BOXES_PER_IMAGE + 1} person boxes; at most '
                       rf'{MAX_BOXES_PER_IMAGE} are taken for one image'):
        check_person_boxes(boxes, (64, 48), 'a')
